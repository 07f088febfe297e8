import assert from 'node:assert/strict';
import { FieldReader, RecordCorruption, parseRecord } from './record-parser.js';

// Hand-built MCAP bytes for the record parser tests (written field by field, not by our encoder), and the checks
// they share.

/** Little-endian field builder. */
export class Bytes {
  readonly out: number[] = [];
  u8(v: number): this {
    this.out.push(v & 0xff);
    return this;
  }
  u16(v: number): this {
    return this.u8(v).u8(v >>> 8);
  }
  u32(v: number): this {
    return this.u16(v & 0xffff).u16(v >>> 16);
  }
  u64(v: number | bigint): this {
    const b = BigInt(v);
    return this.u32(Number(b & 0xffffffffn)).u32(Number(b >> 32n));
  }
  str(s: string): this {
    const b = new TextEncoder().encode(s);
    return this.u32(b.length).raw(b);
  }
  raw(b: ArrayLike<number>): this {
    for (let i = 0; i < b.length; i++) this.out.push(b[i]!);
    return this;
  }
  get length(): number {
    return this.out.length;
  }
}

/** A whole record: opcode, u64 content length, content. */
export function record(opcode: number, body: Bytes | number[]): Uint8Array {
  const content = body instanceof Bytes ? body.out : body;
  return Uint8Array.from(new Bytes().u8(opcode).u64(content.length).raw(content).out);
}

export const viewOf = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
export const parse = (b: Uint8Array, offset = 0) => parseRecord(b, viewOf(b), offset, b.length);
export const reader = (body: Bytes) => {
  const b = Uint8Array.from(body.out);
  return new FieldReader(b, viewOf(b), 0, b.length);
};

/** Expects a RecordCorruption with exactly this message and position. */
export function corruption(fn: () => unknown, message: string, at?: number): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof RecordCorruption, String(error));
    assert.equal(error.name, 'RecordCorruption');
    assert.equal(error.message, message);
    if (at !== undefined) assert.equal(error.at, at);
    return true;
  });
}
