import { TWO_32 } from './constants.js';

const encoder = new TextEncoder();

/**
 * A growable little-endian buffer records are encoded into. 64-bit fields are written as two 32-bit halves so the
 * hot path never allocates a bigint.
 */
export class ByteWriter {
  bytes: Uint8Array;
  view: DataView;
  length = 0;

  constructor(capacity = 64 * 1024) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
  }

  /** Makes room for `extra` more bytes. */
  reserve(extra: number): void {
    const need = this.length + extra;
    if (need <= this.bytes.length) return;
    let cap = this.bytes.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
    this.view = new DataView(next.buffer);
  }

  reset(): void {
    this.length = 0;
  }

  /** Drops the first `n` bytes, keeping the rest (after a partial write-out). */
  shift(n: number): void {
    if (n >= this.length) {
      this.length = 0;
      return;
    }
    this.bytes.copyWithin(0, n, this.length);
    this.length -= n;
  }

  u8(v: number): void {
    this.reserve(1);
    this.bytes[this.length++] = v;
  }
  u16(v: number): void {
    this.reserve(2);
    this.view.setUint16(this.length, v, true);
    this.length += 2;
  }
  u32(v: number): void {
    this.reserve(4);
    this.view.setUint32(this.length, v, true);
    this.length += 4;
  }
  /** A non-negative integer below 2^53. */
  u64(v: number): void {
    this.reserve(8);
    this.view.setUint32(this.length, v >>> 0, true);
    this.view.setUint32(this.length + 4, Math.floor(v / TWO_32), true);
    this.length += 8;
  }
  u64big(v: bigint): void {
    this.reserve(8);
    this.view.setBigUint64(this.length, v, true);
    this.length += 8;
  }
  raw(b: Uint8Array): void {
    const n = b.length;
    this.reserve(n);
    const at = this.length;
    if (n <= 32) {
      // A byte loop beats TypedArray#set's call overhead for tiny payloads.
      const out = this.bytes;
      for (let i = 0; i < n; i++) out[at + i] = b[i]!;
    } else this.bytes.set(b, at);
    this.length = at + n;
  }
  /** u32 byte length + UTF-8. */
  string(s: string): void {
    this.reserve(4 + s.length * 3);
    const at = this.length;
    const { written } = encoder.encodeInto(s, this.bytes.subarray(at + 4));
    this.view.setUint32(at, written, true);
    this.length = at + 4 + written;
  }
  /** u32 byte length + (string key, string value) pairs, in the map's order. */
  stringMap(map: ReadonlyMap<string, string> | Iterable<readonly [string, string]>): void {
    this.reserve(4);
    const at = this.length;
    this.length += 4;
    for (const [k, v] of map) {
      this.string(k);
      this.string(v);
    }
    this.view.setUint32(at, this.length - at - 4, true);
  }
  /** Starts a record: opcode and a length placeholder; returns the token for `endRecord`. */
  beginRecord(opcode: number): number {
    this.reserve(9);
    const at = this.length;
    this.bytes[at] = opcode;
    this.length = at + 9;
    return at;
  }
  /** Fills the length of the record begun at `at`; returns the record's total size. */
  endRecord(at: number): number {
    const content = this.length - at - 9;
    this.view.setUint32(at + 1, content >>> 0, true);
    this.view.setUint32(at + 5, Math.floor(content / TWO_32), true);
    return this.length - at;
  }
  /** A view of the encoded bytes (valid until the next write). */
  view8(start = 0, end = this.length): Uint8Array {
    return this.bytes.subarray(start, end);
  }
}

/**
 * Writes `base + rel` as a little-endian u64 at `at`, where `base` is given as 32-bit halves and `rel` is an integer
 * number with |rel| < 2^53: absolute ns times without a bigint per message.
 */
export function setTime(view: DataView, at: number, baseHi: number, baseLo: number, rel: number): void {
  const total = baseLo + rel;
  view.setUint32(at, total >>> 0, true);
  view.setUint32(at + 4, baseHi + Math.floor(total / TWO_32), true);
}
