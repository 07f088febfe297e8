import zstd from '@foxglove/wasm-zstd';
import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

interface NativeZstd {
  name: string;
  compress(data: Uint8Array, level: number): Uint8Array;
  /** Compresses into `into`: the length written, or −1 when the result does not fit. Where absent, `compress` + copy. */
  compressInto?(data: Uint8Array, level: number, into: Uint8Array): number;
}

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
function pickRuntimeZstd(): NativeZstd | undefined {
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

/** What is used of `zstd-napi`'s binding module (its documented low-level interface: libzstd's own calls). */
interface ZstdNapiBinding {
  CCtx: new () => {
    setParameter(param: number, value: number): void;
    compress2(dst: Uint8Array, src: Uint8Array): number;
  };
  CParameter: { compressionLevel: number };
  compressBound(size: number): number;
}

/**
 * libzstd through Node-API: the optional dependency `zstd-napi`, built from its bundled sources at install. Used where
 * the runtime has no zstd of its own (Node 20 to 22.14) and on Deno, whose `node:zlib` zstd is slower (an output
 * `chunkSize` of the whole chunk instead of 16 KiB closed a quarter of the gap: 693 → 715 MiB/s). Hand-measured with
 * the benchmarks' payload in 4 MiB chunks at level 1: on Node 20, 770–830 MiB/s against 610 for the WebAssembly
 * build, and 192 × 1 MiB zstd frames written in 222 instead of 257 ms (medians of 11); on Deno 2.9, 785 against 693
 * MiB/s for its zlib (medians of six rounds), and the same frames in 207–223 instead of 232–236 ms. One compression
 * context per thread, reused (`ZSTD_compress2` starts each frame afresh and writes the content size into its header,
 * as the others do). Its binding, not its `Compressor`: that allocates a buffer of the worst-case size for every call
 * and copies the result out of it, where the compressor thread compresses straight into its shared output
 * (`compressInto`; 192 MiB of those chunks: 250 → 200 ms on Node). Npm drops an optional dependency whose build
 * failed: the runtime's zstd or the WebAssembly codec then serves, slower and otherwise the same.
 */
function loadZstdNapi(): NativeZstd | undefined {
  let binding: ZstdNapiBinding;
  try {
    binding = createRequire(import.meta.url)('zstd-napi/binding') as ZstdNapiBinding;
  } catch {
    return undefined; // not installed (it is optional), or its build failed
  }
  const context = new binding.CCtx();
  let contextLevel = Number.NaN;
  /** Where `compress` compresses to before copying the result out: grown to the largest worst case seen. */
  let scratch = new Uint8Array(0);
  const compressInto = (data: Uint8Array, level: number, into: Uint8Array): number => {
    if (level !== contextLevel) {
      context.setParameter(binding.CParameter.compressionLevel, level);
      contextLevel = level;
    }
    try {
      return context.compress2(into, data);
    } catch (error) {
      // Smaller than the worst case, `into` may be too small for this data: the result would not be smaller than it.
      if (into.length < binding.compressBound(data.length)) return -1;
      throw error;
    }
  };
  return {
    name: 'zstd-napi',
    compressInto,
    compress: (data, level) => {
      const bound = binding.compressBound(data.length);
      if (scratch.length < bound) scratch = new Uint8Array(bound);
      return scratch.slice(0, compressInto(data, level, scratch));
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

function pickZstd(): NativeZstd | undefined {
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

/**
 * zstd-compresses `data` at `level` into `into`, as {@link zstdCompress} does: the compressed length, or −1 when the
 * result does not fit into `into` (a chunk is stored uncompressed then; libzstd may want a little room beyond the
 * result while it writes, so a result within a few bytes of `into`'s size may not fit). Straight into
 * `into` where the native zstd can (libzstd through `zstd-napi`), else compressed and copied.
 */
export function zstdCompressInto(data: Uint8Array, level: number, into: Uint8Array): number {
  if (native?.compressInto !== undefined && level >= 1) return native.compressInto(data, level, into);
  const compressed = zstdCompress(data, level);
  if (compressed.length > into.length) return -1;
  into.set(compressed);
  return compressed.length;
}
