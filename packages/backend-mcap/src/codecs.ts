import zstd from '@foxglove/wasm-zstd';
import { Decompress as ZstdStream } from 'fzstd';
import lz4 from '@foxglove/wasm-lz4';
import { BagError } from '@vlink/bag-core';
import { checkZstdWindows, concatBytes } from '@vlink/bag-core/internal';
import { zstdCompress } from './compress/zstd-compress.js';

/**
 * One chunk compression, passed to the reader and writer as a map keyed by the MCAP compression name (the way
 * `@mcap/core` takes its decompress handlers). `compress` is optional: a codec without it can only be read.
 */
export interface ChunkCodec {
  compress?(data: Uint8Array, level: number): Uint8Array;
  /** Must return exactly `uncompressedSize` bytes or throw. */
  decompress(data: Uint8Array, uncompressedSize: number): Uint8Array;
  /**
   * Repair only: what the longest decodable prefix of `data` (a cut or damaged stream) decompresses to, at most
   * `limit` bytes. Absent where the codec cannot decode a prefix.
   */
  decompressPrefix?(data: Uint8Array, limit: number): Uint8Array;
}

export type Codecs = Readonly<Record<string, ChunkCodec>>;

let loaded: Promise<Codecs> | undefined;

/**
 * The default codecs: zstd (compress and decompress, `@foxglove/wasm-zstd`; compression natively where the runtime has
 * zstd, see zstd-compress.ts) and lz4 (decompress only,
 * `@foxglove/wasm-lz4`). VLink compiles lz4 out and never writes it; we read it for foreign files, and asking the
 * writer for lz4 chunks fails with `NOT_SUPPORTED`. Both WebAssembly modules load asynchronously, once per process.
 */
export function loadCodecs(): Promise<Codecs> {
  loaded ??= Promise.all([zstd.isLoaded, lz4.isLoaded]).then(
    (): Codecs =>
      Object.freeze({
        zstd: {
          compress: zstdCompress,
          decompress: (data, size) => plain(zstd.decompress(data, size)),
          decompressPrefix: zstdPrefix,
        },
        lz4: { decompress: (data, size) => plain(lz4(data, size)) },
      }),
    (error: unknown) => {
      loaded = undefined;
      throw BagError.wrap(error, 'DRIVER_MISSING', 'cannot load the zstd/lz4 WebAssembly codecs');
    },
  );
  return loaded;
}

/**
 * The blocks of a zstd stream that decode, in order, up to the first that is cut or broken. The WebAssembly zstd only
 * decodes whole frames, so this uses fzstd (a pure-JavaScript streaming decoder, MIT), which hands out each block as
 * soon as it is complete; only `fix` needs it, on chunks that are cut short.
 */
function zstdPrefix(data: Uint8Array, limit: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let total = 0;
  try {
    // A damaged header may ask for a window of up to 2 GiB, which the decoder would allocate: nothing decodes then.
    checkZstdWindows((offset, length) => data.subarray(offset, offset + length), data.length);
  } catch {
    return new Uint8Array(0);
  }
  const stream = new ZstdStream((chunk) => {
    if (total >= limit) return;
    const take = chunk.subarray(0, limit - total);
    parts.push(take.slice());
    total += take.length;
  });
  try {
    stream.push(data, false);
  } catch {
    // the damage: keep the blocks before it
  }
  return concatBytes(parts, total);
}

/** The codecs return Node Buffers; frames must be plain Uint8Arrays (same bytes, no copy). */
function plain(b: Uint8Array): Uint8Array {
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * VLink's `compress_level` → mcap `CompressionLevel` → zstd level, as mcap's C++ writer maps them:
 * 1 Fastest (−5), 2 Fast (−3), 0/3/other Default (1), 4 Slow (5), 5 Slowest (19).
 */
export function zstdLevelFor(compressLevel: number): number {
  switch (compressLevel) {
    case 1:
      return -5;
    case 2:
      return -3;
    case 4:
      return 5;
    case 5:
      return 19;
    default:
      return 1;
  }
}
