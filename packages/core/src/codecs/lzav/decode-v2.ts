import { copyLiterals, copyMatch } from './copy.js';
import { corrupt } from './format.js';

/** Format 2 streams need at least 8 bytes, and a header below `srcLen - 6` has its 6 following bytes in bounds. */
const MIN_STREAM = 8;
const TAIL = 6;

/**
 * Decodes a format-2 stream (written by LZAV 4.x), for data recorded before LZAV 5. Literal blocks are the same as
 * in format 3; references differ: 1-3 offset bytes give 10/18/23-bit offsets, only a 3-byte offset carries bits
 * (its top 3) into the next reference, and a long length is 1 byte plus a second one when the first is 255.
 *
 * Format 2 forbids overlapping references (the LZAV 4 compressor never wrote an offset smaller than the length,
 * and the C decoder's copies rely on it), so `len > dist` is rejected here; references may end anywhere up to
 * `dstLen`, and the closing literal block lies within the last 6 input bytes.
 */
export function decodeV2(src: Uint8Array, out: Uint8Array, dstLen: number, dry: boolean): void {
  const srcLen = src.length;
  if (srcLen < MIN_STREAM) corrupt('stream too short');
  const mrefMinus1 = (src[0] & 15) - 1;
  if (mrefMinus1 < 0 || mrefMinus1 > 5) corrupt('invalid minimum match length');
  const headerEnd = srcLen - TAIL;
  let ip = 1;
  let op = 0;
  let carry = 0;
  let carryShift = 0;

  while (ip < headerEnd) {
    let bh = src[ip++];
    if ((bh & 0x30) === 0) {
      carry |= (bh >>> 6) << carryShift;
      carryShift += 2;
      let len = bh & 15;
      if (len === 0) {
        const b = src[ip++];
        len = b & 0x7f;
        if (b & 0x80) {
          let scale = 128;
          for (let n = 0; n < 4; n++) {
            const c = src[ip++];
            len += (c & 0x7f) * scale;
            if ((c & 0x80) === 0) break;
            scale *= 128;
          }
        }
        len += 16;
      }
      if (len > dstLen - op) corrupt('literals overrun the output');
      if (len > srcLen - ip) corrupt('literals overrun the input');
      if (!dry) copyLiterals(out, op, src, ip, len);
      op += len;
      ip += len;
      if (ip >= headerEnd) break;
      bh = src[ip++];
    }

    const type = (bh >>> 4) & 3;
    let raw = 0;
    if (type >= 1) raw = src[ip];
    if (type >= 2) raw |= src[ip + 1] << 8;
    if (type === 3) raw |= src[ip + 2] << 16;
    // raw < 2^24 and carryShift <= 5, so `dist` stays below 2^28.
    const dist = ((((raw << 2) | (bh >>> 6)) & 0x7fffff) << carryShift) | carry;
    carry = raw >>> 21;
    carryShift = type === 3 ? 3 : 0;
    ip += type;

    let len = bh & 15;
    if (len === 0) {
      const b = src[ip++];
      len = 16 + b;
      if (b === 255) len += src[ip++];
    }
    len += mrefMinus1;
    if (dist > op) corrupt('reference offset out of range');
    if (len > dist) corrupt('overlapping reference in a format-2 stream');
    if (len > dstLen - op) corrupt('reference overruns the output');
    if (!dry) copyMatch(out, op, dist, len);
    op += len;
  }

  if (op !== dstLen) corrupt(`decoded ${op} bytes, expected ${dstLen}`);
}
