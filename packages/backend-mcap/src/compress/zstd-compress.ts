import zstd from '@foxglove/wasm-zstd';
import { createRequire } from 'node:module';
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
 * 22.15. Native zstd compresses about twice as fast as the WebAssembly build at level 1 (4 MiB chunks of half-random
 * bytes, measured: Bun 199 vs 103 MiB/s, Deno 200 vs 112 MiB/s), and chunk compression is what a zstd recording of
 * large frames spends its time on. Same format, same level; any zstd decoder reads either.
 */
function pickRuntimeZstd(): { name: string; compress: NativeZstd } | undefined {
  const bun = (globalThis as { Bun?: { zstdCompressSync?: (data: Uint8Array, o: { level: number }) => Uint8Array } })
    .Bun;
  if (typeof bun?.zstdCompressSync === 'function') {
    const compress = bun.zstdCompressSync.bind(bun);
    return { name: 'Bun.zstdCompressSync', compress: (data, level) => compress(data, { level }) };
  }
  const z = zlib as unknown as ZstdZlib;
  const param = z.constants.ZSTD_c_compressionLevel;
  if (typeof z.zstdCompressSync === 'function' && param !== undefined) {
    const compress = z.zstdCompressSync;
    // The pledged size puts the content size in the frame header, as the WebAssembly codec does (the chunk loader
    // checks a chunk's claimed size against it before decompressing).
    return {
      name: 'zlib.zstdCompressSync',
      compress: (data, level) => compress(data, { params: { [param]: level }, pledgedSrcSize: data.length }),
    };
  }
  return undefined;
}

interface ZstdNapi {
  Compressor: new () => { setParameters(p: { compressionLevel: number }): void; compress(d: Uint8Array): Uint8Array };
}

/**
 * libzstd through Node-API: the optional dependency `zstd-napi`, built from its bundled sources at install. Used where
 * the runtime has no zstd of its own (Node 20 to 22.14) and on Deno, whose `node:zlib` zstd is slower (an output
 * `chunkSize` of the whole chunk instead of 16 KiB closed a quarter of the gap: 693 → 715 MiB/s). Hand-measured with the benchmarks' payload in 4 MiB chunks at level 1: on Node 20,
 * 770–830 MiB/s against 610 for the WebAssembly build, and 192 × 1 MiB zstd frames written in 222 instead of 257 ms
 * (medians of 11); on Deno 2.9, 785 against 693 MiB/s for its zlib (medians of six rounds), and the same frames in
 * 207–223 instead of 232–236 ms. One compression context per thread, reused (`ZSTD_compress2` starts each frame
 * afresh and writes the content size into its header, as the others do). Npm drops an optional dependency whose
 * build failed: the runtime's zstd or the WebAssembly codec then serves, slower and otherwise the same.
 */
function loadZstdNapi(): { name: string; compress: NativeZstd } | undefined {
  let loaded: ZstdNapi;
  try {
    loaded = createRequire(import.meta.url)('zstd-napi') as ZstdNapi;
  } catch {
    return undefined; // not installed (it is optional), or its build failed
  }
  const context = new loaded.Compressor();
  let contextLevel = Number.NaN;
  return {
    name: 'zstd-napi',
    compress: (data, level) => {
      if (level !== contextLevel) {
        context.setParameters({ compressionLevel: level });
        contextLevel = level;
      }
      return context.compress(data);
    },
  };
}

const deno = (globalThis as { Deno?: { permissions?: { querySync?(d: { name: string }): { state: string } } } }).Deno;

/**
 * Deno loads an addon only with the FFI permission and would ask for it at a terminal: the addon is tried only when
 * that permission is already granted (`-A`, `--allow-ffi`), never asked for.
 */
function ffiGranted(): boolean {
  try {
    return deno?.permissions?.querySync?.({ name: 'ffi' }).state === 'granted';
  } catch {
    return false;
  }
}

function pickZstd(): { name: string; compress: NativeZstd } | undefined {
  if (deno !== undefined) return (ffiGranted() ? loadZstdNapi() : undefined) ?? pickRuntimeZstd();
  // Bun's own is as fast as the addon (209 ms for the frames above, against 214 for the addon on Node): never loaded.
  return pickRuntimeZstd() ?? loadZstdNapi();
}

const native = pickZstd();

/** Which zstd compresses chunks on this runtime: a native one's name, or `@foxglove/wasm-zstd`. */
export const ZSTD_IMPLEMENTATION = native?.name ?? '@foxglove/wasm-zstd';

/**
 * zstd-compresses `data` at `level`: natively where the runtime can (levels ≥ 1; the negative "fast" levels stay with
 * the WebAssembly codec, whose range they are defined for), else with `@foxglove/wasm-zstd` (its module must be
 * loaded: `zstd.isLoaded`). The result is a plain Uint8Array view.
 */
export function zstdCompress(data: Uint8Array, level: number): Uint8Array {
  const out = native !== undefined && level >= 1 ? native.compress(data, level) : zstd.compress(data, level);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
