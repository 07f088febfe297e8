import { BagError } from '../../errors.js';
import { decodeStream } from './decode.js';
import { MAX_BLOCK_LENGTH, corrupt } from './format.js';

const EMPTY = new Uint8Array(0);
/**
 * A few bytes of LZAV can legitimately claim gigabytes (one long run), so the claimed size cannot be checked against
 * the input size. Instead, when the claim is large and out of proportion to the input, the stream is first walked
 * without writing: a lying `rawLength` is then refused before anything that big is allocated. The walk costs at most
 * one header parse per input byte, small next to writing `rawLength` bytes.
 */
const PRECHECK_MIN_LENGTH = 1 << 20;
const PRECHECK_RATIO = 8;

/**
 * Decompresses a raw LZAV stream (format 2 or 3) whose decompressed size is known to be exactly `rawLength`.
 * Throws `BagError` `INVALID_ARGUMENT` for a bad `rawLength` and `CORRUPT_DATA` for anything wrong with the data,
 * including a size mismatch. Never allocates more than `rawLength` bytes for the result.
 */
export function decompress(data: Uint8Array, rawLength: number): Uint8Array {
  if (!(data instanceof Uint8Array)) throw new BagError('INVALID_ARGUMENT', 'lzav: data must be a Uint8Array');
  if (!Number.isInteger(rawLength) || rawLength < 0) {
    throw new BagError('INVALID_ARGUMENT', `lzav: rawLength must be a non-negative integer, got ${rawLength}`);
  }
  if (rawLength > MAX_BLOCK_LENGTH) {
    throw new BagError('INVALID_ARGUMENT', `lzav: rawLength ${rawLength} exceeds the 2 GiB LZAV block limit`);
  }
  // An empty stream stands for empty data (the compressor's output for empty input), and only for that.
  if (data.length === 0 || rawLength === 0) {
    if (data.length === 0 && rawLength === 0) return new Uint8Array(0);
    corrupt(data.length === 0 ? 'empty stream for non-empty data' : 'non-empty stream for empty data');
  }
  const format = data[0] >>> 4;
  if (format !== 3 && format !== 2) corrupt(`unsupported stream format ${format}`);
  if (rawLength >= PRECHECK_MIN_LENGTH && rawLength / PRECHECK_RATIO > data.length)
    decodeStream(data, EMPTY, rawLength, true, format);
  let out: Uint8Array;
  try {
    out = new Uint8Array(rawLength);
  } catch (error) {
    throw BagError.wrap(error, 'LIMIT_REACHED', `lzav: cannot allocate ${rawLength} bytes`);
  }
  decodeStream(data, out, rawLength, false, format);
  return out;
}
