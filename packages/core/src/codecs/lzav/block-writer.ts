import { OFFSET_1BYTE_MAX, OFFSET_2BYTE_MAX } from './format.js';

/** Carry bits that each reference-block type leaves room for in its last offset byte (type 0 is never written). */
const CARRY_BITS = [0, 0, 3, 5];

/**
 * Emits format-3 blocks. The format's twist is "offset carry": the low bits of each reference offset are not stored
 * in its own block but in spare bits of the block before it (the top bits of the previous reference's last offset
 * byte, plus 2 bits of an intervening literal header). So the writer remembers where the previous reference's last
 * offset byte is (`carryAt`) and how many spare bits it has (`carryBits`).
 */
export class BlockWriter {
  out: Uint8Array;
  pos: number;
  private carryAt: number;
  private carryBits = 0;
  private readonly mrefMinus1: number;

  constructor(out: Uint8Array, mref: number, prefix: number) {
    this.out = out;
    out[0] = prefix;
    this.pos = 1;
    // Pointing the first carry at the prefix byte is harmless: with 0 carry bits nothing is ORed in.
    this.carryAt = 0;
    this.mrefMinus1 = mref - 1;
  }

  get carryShift(): number {
    return this.carryBits;
  }

  /** Writes `litLen` literals taken from `src[litFrom..]` (if any), then a reference of `len` bytes at offset `dist`. */
  block(src: Uint8Array, litFrom: number, litLen: number, len: number, dist: number): void {
    const out = this.out;
    const shift = this.carryBits;
    out[this.carryAt] |= (dist << (8 - shift)) & 0xff;
    let d = dist >>> shift;
    let op = this.pos;
    if (litLen !== 0) {
      const carry = (d & 3) << 6;
      d >>>= 2;
      if (litLen < 16) {
        out[op++] = carry | litLen;
      } else {
        out[op++] = carry;
        op = writeVarint(out, op, litLen - 16);
      }
      op = copyLiterals(out, op, src, litFrom, litLen);
    }
    const type = d > OFFSET_2BYTE_MAX ? 3 : d > OFFSET_1BYTE_MAX ? 2 : 1;
    const rc = len - this.mrefMinus1;
    out[op] = ((d & 3) << 6) | (type << 4) | (rc < 16 ? rc : 0);
    d >>>= 2;
    out[op + 1] = d & 0xff;
    if (type > 1) out[op + 2] = (d >>> 8) & 0xff;
    if (type > 2) out[op + 3] = d >>> 16;
    this.carryAt = op + type;
    this.carryBits = CARRY_BITS[type];
    op += type + 1;
    if (rc >= 16) op = writeVarint(out, op, rc - 16);
    this.pos = op;
  }

  /** Writes the closing literal block (at least 9 bytes long, which the decoder relies on). */
  finish(src: Uint8Array, litFrom: number, litLen: number): number {
    const out = this.out;
    let op = this.pos;
    if (litLen > 15) {
      out[op++] = 0;
      op = writeVarint(out, op, litLen - 16);
    } else {
      out[op++] = litLen;
    }
    this.pos = copyLiterals(out, op, src, litFrom, litLen);
    return this.pos;
  }
}

/** Little-endian base-128 length, continuation in the high bit (the decoder reads at most 5 bytes). */
function writeVarint(out: Uint8Array, op: number, value: number): number {
  while (value > 127) {
    out[op++] = 0x80 | (value & 0x7f);
    value >>>= 7;
  }
  out[op++] = value;
  return op;
}

function copyLiterals(out: Uint8Array, op: number, src: Uint8Array, from: number, len: number): number {
  if (len < 32) {
    for (let i = 0; i < len; i++) out[op + i] = src[from + i];
  } else {
    out.set(src.subarray(from, from + len), op);
  }
  return op + len;
}
