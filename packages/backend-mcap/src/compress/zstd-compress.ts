import zstd from '@foxglove/wasm-zstd';
import * as zlib from 'node:zlib';

type NativeZstd = (data: Uint8Array, level: number) => Uint8Array;

interface ZstdZlib {
  zstdCompressSync?: (
    data: Uint8Array,
    options: { params: Record<number, number>; pledgedSrcSize: number },
  ) => Uint8Array;
  constants: { ZSTD_c_compressionLevel?: number };
}

/**
 * The runtime's own zstd where it has one: `Bun.zstdCompressSync` on Bun, `zlib.zstdCompressSync` on Deno and Node ≥
 * 22.15 (Node 20 has none). Native zstd compresses about twice as fast as the WebAssembly build at level 1 (4 MiB
 * chunks of half-random bytes, measured: Bun 199 vs 103 MiB/s, Deno 200 vs 112 MiB/s), and chunk compression is what
 * a zstd recording of large frames spends its time on. Same format, same level; any zstd decoder reads either.
 */
function pickNative(): NativeZstd | undefined {
  const bun = (globalThis as { Bun?: { zstdCompressSync?: (data: Uint8Array, o: { level: number }) => Uint8Array } })
    .Bun;
  if (typeof bun?.zstdCompressSync === 'function') {
    const compress = bun.zstdCompressSync.bind(bun);
    return (data, level) => compress(data, { level });
  }
  const z = zlib as unknown as ZstdZlib;
  const param = z.constants.ZSTD_c_compressionLevel;
  if (typeof z.zstdCompressSync === 'function' && param !== undefined) {
    const compress = z.zstdCompressSync;
    // The pledged size puts the content size in the frame header, as the WebAssembly codec does (the chunk loader
    // checks a chunk's claimed size against it before decompressing).
    return (data, level) => compress(data, { params: { [param]: level }, pledgedSrcSize: data.length });
  }
  return undefined;
}

const native = pickNative();

/**
 * zstd-compresses `data` at `level`: natively where the runtime can (levels ≥ 1; the negative "fast" levels stay with
 * the WebAssembly codec, whose range they are defined for), else with `@foxglove/wasm-zstd` (its module must be
 * loaded: `zstd.isLoaded`). The result is a plain Uint8Array view.
 */
export function zstdCompress(data: Uint8Array, level: number): Uint8Array {
  const out = native !== undefined && level >= 1 ? native(data, level) : zstd.compress(data, level);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
