import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../../errors.js';
import { compressBound } from './format.js';
import { lzav } from './index.js';
import { referenceDecodeV3 } from './lzav-reference.test.helper.js';

// Hand-built streams at the exact edges of the decoders' rules: where a block header may start, where the closing
// literal block ends, how far a reference may reach, how many bytes a length may take, and the format-2 checks.
// Each accepted stream is checked byte for byte, each refused one by its message (mutation testing found these
// edges unpinned: a decoder off by one there accepts damaged data or refuses good data).
const L = [11, 12, 13, 14, 15, 16, 17, 18];
const C9 = [21, 22, 23, 24, 25, 26, 27, 28, 29];
const C8 = C9.slice(0, 8);
const C6 = C9.slice(0, 6);
const PAD = (n: number) => new Array<number>(n).fill(0);
const repeat = (bytes: number[], length: number) => Array.from({ length }, (_, i) => bytes[i % bytes.length]);

function refused(fn: () => unknown, message: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(BagError.isInstance(error), String(error));
    assert.equal(error.code, 'CORRUPT_DATA');
    assert.equal(error.message, message);
    return true;
  });
}

/** Decodes a format-3 stream and checks the result against the expected bytes and the test reference decoder. */
function decodesV3(stream: number[], expected: number[]): void {
  const src = Uint8Array.from(stream);
  assert.deepEqual(lzav.decompress(src, expected.length), Uint8Array.from(expected));
  assert.deepEqual(referenceDecodeV3(src, expected.length), Uint8Array.from(expected));
}

describe('lzav format 3: where blocks may start and end', () => {
  test('a closing literal block may end exactly 9 bytes before the end; the rest is padding, never a header', () => {
    // 8 literals, a 5-byte reference 8 back, 9 closing literals ending at srcLen - 9, then 9 zero bytes. Read as a
    // header, the first zero would be a reference of distance 0.
    decodesV3([0x35, 0x08, ...L, 0x91, 0x00, 0x09, ...C9, ...PAD(9)], [...L, ...L.slice(0, 5), ...C9]);
  });

  test('no block header starts in the last 9 bytes: a stream ending on a reference there is short', () => {
    // After the reference the input has exactly 9 bytes left (an 8-literal block): they are not decoded.
    const src = Uint8Array.of(0x35, 0x08, ...L, 0x91, 0x00, 0x08, ...C8);
    refused(() => lzav.decompress(src, 21), 'lzav: decoded 13 bytes, expected 21');
    assert.equal(referenceDecodeV3(src, 21), undefined);
  });

  test('a reference may end exactly 8 bytes before the end of the output, not 1 byte later', () => {
    // 19 bytes from 8 back ending at 27 of 35; then 8 closing literals and 1 byte of padding.
    const stream = [0x35, 0x08, ...L, 0x9f, 0x00, 0x08, ...C8, 0x00];
    decodesV3(stream, [...L, ...repeat(L, 19), ...C8]);
    const shorter = Uint8Array.of(0x35, 0x08, ...L, 0x9f, 0x00, 0x07, ...C8.slice(0, 7), 0x00, 0x00);
    refused(() => lzav.decompress(shorter, 34), 'lzav: reference overruns the output');
  });

  test('a header with type bits 0 after a literal block is a reference whose distance is the carried bits alone', () => {
    // A 3-byte-offset reference (distance 8) carries 8 in its last byte's top bits; after a 1-literal block, the
    // 0-offset-byte reference 0x01 takes distance 8 from the carry alone and copies output bytes 6..10.
    const stream = [0x35, 0x08, ...L, 0xb1, 0x00, 0x00, 0x40, 0x01, 99, 0x01, 0x09, ...C9];
    decodesV3(stream, [...L, ...L.slice(0, 5), 99, 17, 18, 11, 12, 13, ...C9]);
  });
});

describe('lzav lengths: at most 5 bytes', () => {
  test('a literal length of 5 continuation-marked bytes ends there; the next byte is data (format 3 and 2)', () => {
    const data = [0x00, 0x80, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14];
    decodesV3([0x35, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, ...data], data);
    assert.deepEqual(
      lzav.decompress(Uint8Array.of(0x25, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, ...data), 16),
      Uint8Array.from(data),
    );
  });

  test('a reference length of 5 continuation-marked bytes ends there; the next byte is the next header', () => {
    // 16 + 0 + 4 (mref 5) = 20 bytes from 8 back, an overlapping copy that repeats the 8 literals.
    decodesV3(
      [0x35, 0x08, ...L, 0x90, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x09, ...C9],
      [...L, ...repeat(L, 20), ...C9],
    );
  });

  test('a 3-byte literal length counts in base 128, low group first (format 3 and 2)', () => {
    // 16 + 16 + 28 * 128 + 1 * 128^2 = 20000 literals.
    const data = Array.from({ length: 20000 }, (_, i) => (i * 7 + (i >>> 8)) & 0xff);
    for (const prefix of [0x35, 0x25]) {
      const src = Uint8Array.of(prefix, 0x00, 0x90, 0x9c, 0x01, ...data);
      assert.deepEqual(lzav.decompress(src, 20000), Uint8Array.from(data), `prefix ${prefix}`);
    }
  });
});

describe('lzav format 2: each rule, at its edge', () => {
  /** 8 literals, a reference `ref` (header, offset bytes), 6 closing literals. */
  const v2 = (mref: number, ref: number[], tail: number[] = [0x06, ...C6]) =>
    Uint8Array.of(0x20 | mref, 0x08, ...L, ...ref, ...tail);

  test('an 8-byte stream is long enough (one 6-literal block); 7 bytes are not', () => {
    assert.deepEqual(lzav.decompress(Uint8Array.of(0x25, 0x06, 1, 2, 3, 4, 5, 6), 6), Uint8Array.of(1, 2, 3, 4, 5, 6));
    refused(() => lzav.decompress(Uint8Array.of(0x25, 0x05, 1, 2, 3, 4, 5), 5), 'lzav: stream too short');
  });

  test('minimum match lengths 1 and 6 are valid and add mref - 1 to every reference length', () => {
    // Header 0x91: type 1, length nibble 1; offset byte 0 and low bits 2, shifted by the literal's 2 carry bits: 8.
    assert.deepEqual(lzav.decompress(v2(1, [0x91, 0x00]), 15), Uint8Array.of(...L, 11, ...C6));
    assert.deepEqual(lzav.decompress(v2(6, [0x91, 0x00]), 20), Uint8Array.of(...L, ...L.slice(0, 6), ...C6));
    assert.deepEqual(lzav.decompress(v2(5, [0x91, 0x00]), 19), Uint8Array.of(...L, ...L.slice(0, 5), ...C6));
  });

  test('a reference with no offset bytes takes its distance from its own and the carried bits', () => {
    // 0x81: type 0, low bits 2, length nibble 1. The byte after it is the next header, not an offset.
    assert.deepEqual(lzav.decompress(v2(5, [0x81]), 19), Uint8Array.of(...L, ...L.slice(0, 5), ...C6));
  });

  test('a reference may end exactly at the end of the output (format 2 has no 8-byte margin), not past it', () => {
    const stream = v2(5, [0x91, 0x00], PAD(6));
    assert.deepEqual(lzav.decompress(stream, 13), Uint8Array.of(...L, ...L.slice(0, 5)));
    refused(() => lzav.decompress(stream, 12), 'lzav: reference overruns the output');
  });

  test('a closing literal block may end exactly 6 bytes before the end; the rest is padding', () => {
    const stream = v2(5, [0x91, 0x00], [0x06, ...C6, ...PAD(6)]);
    assert.deepEqual(lzav.decompress(stream, 19), Uint8Array.of(...L, ...L.slice(0, 5), ...C6));
  });

  test('literals past the output or the input, references out of range or overlapping, wrong totals', () => {
    refused(() => lzav.decompress(v2(5, [0x91, 0x00]), 15), 'lzav: literals overrun the output');
    refused(() => lzav.decompress(v2(5, [0x91, 0x00]), 5), 'lzav: literals overrun the output');
    refused(
      () => lzav.decompress(Uint8Array.of(0x25, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 15),
      'lzav: literals overrun the input',
    );
    // Offset byte 1: distance ((1 << 2) | 2) << 2 = 24, after 8 bytes.
    refused(() => lzav.decompress(v2(5, [0x91, 0x01]), 19), 'lzav: reference offset out of range');
    // Length nibble 5: 9 bytes from 8 back.
    refused(() => lzav.decompress(v2(5, [0x95, 0x00]), 23), 'lzav: overlapping reference in a format-2 stream');
    refused(() => lzav.decompress(v2(5, [0x91, 0x00]), 25), 'lzav: decoded 19 bytes, expected 25');
  });
});

describe('lzav compressBound', () => {
  /** lzav_compress_bound_mref5/6 of lzav.h 5.x. */
  const cBound = (n: number, mref: number): number => {
    if (n <= 0) return 16;
    const k = mref === 5 ? 16 : 144;
    const l2 = Math.floor(n / (k + mref));
    return Math.floor((n - l2 * mref + k - 1) / k) * 2 - l2 + n + 16;
  };

  test("is the C library's bound plus 16 bytes of slack, and 16 for empty input", () => {
    assert.equal(compressBound(0, 5), 16);
    assert.equal(compressBound(-3, 6), 16);
    for (const n of [1, 15, 16, 20, 21, 22, 100, 143, 150, 151, 1000, 65536, 262143, 262144, 1 << 20]) {
      for (const mref of [5, 6]) assert.equal(compressBound(n, mref), cBound(n, mref) + 16, `n ${n} mref ${mref}`);
    }
    // Worked by hand: l2 = 47, (1000 - 235 + 15) / 16 = 48 → 48 * 2 - 47 + 1000 + 16 = 1065; mref 6: 1024.
    assert.equal(compressBound(1000, 5), 1065 + 16);
    assert.equal(compressBound(1000, 6), 1024 + 16);
  });

  test('holds incompressible input', () => {
    let s = 12345;
    for (const n of [1, 17, 300, 5000, 70000]) {
      const data = Uint8Array.from({ length: n }, () => {
        s = (s * 1103515245 + 12345) >>> 0;
        return s >>> 24;
      });
      const out = lzav.compress(data);
      assert.ok(out.length <= cBound(n, 5), `n ${n}: ${out.length} > ${cBound(n, 5)}`);
      assert.deepEqual(lzav.decompress(out, n), data);
    }
  });
});
