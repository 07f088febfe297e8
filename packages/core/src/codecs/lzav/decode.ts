import { copyLiterals, copyMatch } from './copy.js';
import { MIN_OFFSET, corrupt } from './format.js';

/**
 * Decodes a format-2 or format-3 stream into `out[0..dstLen)`. With `dry` set nothing is written: the stream is only
 * validated and measured, which lets the caller refuse a bogus `rawLength` before allocating it.
 *
 * Block layout (header bits 4-5 = type): type 0 is a literal run; types 1-3 are references with 1-3 offset bytes.
 * A literal header's top 2 bits carry low bits of the *next* reference's offset; `carry`/`carryShift` accumulate
 * them. Lengths of 0 in a literal header mean "16 + a little-endian base-128 value follows" (at most 5 bytes).
 * Literal blocks are the same in both formats, so they are decoded once here; the two formats differ only in their
 * references and acceptance rules:
 *
 * - Format 3 (LZAV 5.x; acceptance mirrors lzav_decompress_3 exactly): the top 3 or 5 bits of a type-2/3 block's
 *   last offset byte are carry bits too; a long reference length is the same base-128 value as a literal's; offsets
 *   must be >= 8 and within the output so far; a reference must end at least 8 bytes before `dstLen`; a literal block
 *   ends the stream when it ends within the last 9 input bytes (the rest of the input is padding).
 * - Format 2 (LZAV 4.x, for data recorded before LZAV 5): 1-3 offset bytes give 10/18/23-bit offsets, only a 3-byte
 *   offset carries bits (its top 3) into the next reference, and a long length is 1 byte plus a second one when the
 *   first is 255. Overlapping references are forbidden (the LZAV 4 compressor never wrote an offset smaller than the
 *   length, and the C decoder's copies rely on it), so `len > dist` is rejected; references may end anywhere up to
 *   `dstLen`, and the closing literal block lies within the last 6 input bytes.
 *
 * Either way a literal block is always followed by a reference block unless it ends the stream, and the output must
 * come out exactly `dstLen` long. The format checks in the loop test a loop-invariant flag, which costs nothing
 * measurable next to the byte moves (see the A/B in the commit that merged the two decoders).
 */
export function decodeStream(src: Uint8Array, out: Uint8Array, dstLen: number, dry: boolean, format: 2 | 3): void {
  const v2 = format === 2;
  const srcLen = src.length;
  // A header at `ip < srcLen - tail` has its longest possible encoding inside the input (9 more bytes in format 3,
  // 6 in format 2); the reference decoders demand a header byte plus the closing literal block.
  const tail = v2 ? 6 : 9;
  if (srcLen < (v2 ? 8 : 11)) corrupt('stream too short');
  const mrefMinus1 = (src[0] & 15) - 1;
  if (mrefMinus1 < 0 || mrefMinus1 > 5) corrupt('invalid minimum match length');
  const headerEnd = srcLen - tail;
  const refLimit = v2 ? dstLen : dstLen - 8;
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
      if (ip >= headerEnd) break; // the closing literal block
      // Whatever follows a literal block is read as a reference, even with type bits 0 (as the C decoders do),
      // so two literal blocks in a row can never pile up carry bits.
      bh = src[ip++];
    }

    const type = (bh >>> 4) & 3;
    let offset = 0;
    let nextCarry = 0;
    let nextShift = 0;
    if (v2) {
      let raw = 0;
      if (type >= 1) raw = src[ip];
      if (type >= 2) raw |= src[ip + 1] << 8;
      if (type === 3) raw |= src[ip + 2] << 16;
      offset = ((raw << 2) | (bh >>> 6)) & 0x7fffff;
      nextCarry = raw >>> 21;
      nextShift = type === 3 ? 3 : 0;
    } else if (type === 1) {
      offset = (src[ip] << 2) | (bh >>> 6);
    } else if (type === 2) {
      const b1 = src[ip + 1];
      offset = ((b1 & 0x1f) << 10) | (src[ip] << 2) | (bh >>> 6);
      nextCarry = b1 >>> 5;
      nextShift = 3;
    } else if (type === 3) {
      const b2 = src[ip + 2];
      offset = ((b2 & 7) << 18) | (src[ip + 1] << 10) | (src[ip] << 2) | (bh >>> 6);
      nextCarry = b2 >>> 3;
      nextShift = 5;
    }
    // offset < 2^21 with carryShift <= 7 (format 2: < 2^23 with <= 5), so `dist` stays below 2^28.
    const dist = (offset << carryShift) | carry;
    carry = nextCarry;
    carryShift = nextShift;
    ip += type;

    let len = bh & 15;
    if (len === 0 && v2) {
      const b = src[ip++];
      len = 16 + b;
      if (b === 255) len += src[ip++];
    } else if (len === 0) {
      // The literal block's base-128 length again, written out rather than shared: a helper returning both the
      // length and its end cost 3-7 % decode speed (a V8 call per long block; measured A/B, 2026-12-02).
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
    len += mrefMinus1;
    if (dist > op || (!v2 && dist < MIN_OFFSET)) corrupt('reference offset out of range');
    if (v2 && len > dist) corrupt('overlapping reference in a format-2 stream');
    if (len > refLimit - op) corrupt('reference overruns the output');
    if (!dry) copyMatch(out, op, dist, len);
    op += len;
  }

  if (op !== dstLen) corrupt(`decoded ${op} bytes, expected ${dstLen}`);
}
