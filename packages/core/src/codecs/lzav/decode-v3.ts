import { copyLiterals, copyMatch } from './copy.js';
import { MIN_OFFSET, corrupt } from './format.js';

/** The reference decoder demands at least this many input bytes (a header byte plus the closing literal block). */
const MIN_STREAM = 11;
/** A block header at `ip < srcLen - TAIL` has its longest possible encoding (9 more bytes) inside the input. */
const TAIL = 9;

/**
 * Decodes a format-3 stream into `out[0..dstLen)`. With `dry` set nothing is written: the stream is only validated
 * and measured, which lets the caller refuse a bogus `rawLength` before allocating it.
 *
 * Block layout (header bits 4-5 = type): type 0 is a literal run; types 1-3 are references with 1-3 offset bytes.
 * A literal header's top 2 bits, and the top 3 or 5 bits of a type-2/3 block's last offset byte, carry low bits of
 * the *next* reference's offset; `carry`/`carryShift` accumulate them. Lengths of 0 in the header mean "16 + a
 * little-endian base-128 value follows" (at most 5 bytes).
 *
 * Acceptance mirrors lzav_decompress_3 exactly: offsets must be >= 8 and within the output so far, a reference must
 * end at least 8 bytes before `dstLen`, a literal block is always followed by a reference block unless it ends
 * within the last 9 input bytes (then it ends the stream, and the rest of the input is padding), and the output
 * must come out exactly `dstLen` long.
 */
export function decodeV3(src: Uint8Array, out: Uint8Array, dstLen: number, dry: boolean): void {
  const srcLen = src.length;
  if (srcLen < MIN_STREAM) corrupt('stream too short');
  const mrefMinus1 = (src[0] & 15) - 1;
  if (mrefMinus1 < 0 || mrefMinus1 > 5) corrupt('invalid minimum match length');
  const headerEnd = srcLen - TAIL;
  const refLimit = dstLen - 8;
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
      // Whatever follows a literal block is read as a reference, even with type bits 0 (as the C decoder does),
      // so two literal blocks in a row can never pile up carry bits.
      bh = src[ip++];
    }

    const type = (bh >>> 4) & 3;
    let offset = 0;
    let nextCarry = 0;
    let nextShift = 0;
    if (type === 1) {
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
    // offset < 2^21 and carryShift <= 7, so this stays a small positive int.
    const dist = (offset << carryShift) | carry;
    carry = nextCarry;
    carryShift = nextShift;
    ip += type;

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
    len += mrefMinus1;
    if (dist < MIN_OFFSET || dist > op) corrupt('reference offset out of range');
    if (len > refLimit - op) corrupt('reference overruns the output');
    if (!dry) copyMatch(out, op, dist, len);
    op += len;
  }

  if (op !== dstLen) corrupt(`decoded ${op} bytes, expected ${dstLen}`);
}
