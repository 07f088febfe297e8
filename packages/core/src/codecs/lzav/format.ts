import { BagError } from '../../errors.js';

/**
 * Constants of the LZAV stream format (formats 2 and 3), as fixed by the reference C implementation (lzav.h 5.x).
 * The compressor and the decoders must agree on them exactly, so they live in one place.
 */

/** Format id written by every LZAV 5.x compressor (upper nibble of the prefix byte). */
export const FORMAT_CURRENT = 3;
/** A format-3 stream always ends with a literal block of at least this many bytes (format 2 used 6). */
export const LITERALS_AT_END = 9;
/** The compressor never emits offsets below this; the format-3 decoder rejects them. */
export const MIN_OFFSET = 8;
/** Largest offset (after carry bits are taken out) that fits a 1- or 2-byte offset block. */
export const OFFSET_1BYTE_MAX = (1 << 10) - 1;
export const OFFSET_2BYTE_MAX = (1 << 15) - 1;
/** 21-bit offsets: the carry bits stretch this window, so the check is `d < WINDOW << carryShift`. */
export const WINDOW = 1 << 21;
/** Inputs below this size use a minimum match of 5 bytes, larger ones 6 (like `lzav_compress_default`). */
export const MREF5_THRESHOLD = 1 << 18;
/** The C API takes `int` lengths, so blocks are limited to 2 GiB - 1 on both sides. */
export const MAX_BLOCK_LENGTH = 0x7fffffff;

/** Every decoding failure funnels through here so the code and message prefix stay uniform. */
export function corrupt(message: string): never {
  throw new BagError('CORRUPT_DATA', `lzav: ${message}`);
}

/** Worst-case compressed size for a given input (mirrors lzav_compress_bound_mref5/6), plus slack. */
export function compressBound(length: number, mref: number): number {
  if (length <= 0) return 16;
  const k = mref === 5 ? 16 : 16 + 127 + 1;
  const l2 = Math.floor(length / (k + mref));
  const extra = Math.floor((length - l2 * mref + k - 1) / k) * 2 - l2 + 16;
  return length + extra + 16;
}
