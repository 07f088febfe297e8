import { BagError } from '../../errors.js';
import { compressWithRoom } from './compress.js';
import { decompress } from './decompress.js';
import { MAX_BLOCK_LENGTH } from './format.js';

export interface LzavCompressOptions {
  /** VLink's `compress_level`: above 3 selects the slower high-ratio compressor. Default 3. */
  level?: number;
}

/**
 * LZAV, the codec VLink uses for per-message compression in `.vdb` files. Streams are format 3, byte-identical to
 * LZAV 5.x's `lzav_compress_default` (level <= 3) or `lzav_compress_hi` (level > 3); decompression also accepts the
 * format 2 streams of LZAV 4.x. A stream does not record its decompressed size: store it alongside.
 */
export const lzav = {
  /** Compresses `data`; empty input gives an empty stream. */
  compress(data: Uint8Array, options: LzavCompressOptions = {}): Uint8Array {
    return compressRaw(data, options.level ?? 3, 0, 0);
  },
  /** Decompresses a stream produced from exactly `rawLength` bytes; see {@link decompress} for the errors. */
  decompress(data: Uint8Array, rawLength: number): Uint8Array {
    return decompress(data, rawLength);
  },
};

/** Compression with spare room around the stream, for framing without a second copy. */
export function compressRaw(data: Uint8Array, level: number, head: number, tail: number): Uint8Array {
  if (!(data instanceof Uint8Array)) throw new BagError('INVALID_ARGUMENT', 'lzav: data must be a Uint8Array');
  if (typeof level !== 'number' || Number.isNaN(level)) {
    throw new BagError('INVALID_ARGUMENT', `lzav: level must be a number, got ${String(level)}`);
  }
  if (data.length > MAX_BLOCK_LENGTH) {
    throw new BagError('INVALID_ARGUMENT', `lzav: ${data.length} bytes exceeds the 2 GiB LZAV block limit`);
  }
  return compressWithRoom(data, level > 3, head, tail);
}
