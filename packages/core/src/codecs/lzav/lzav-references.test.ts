import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fixturePath } from '@vlink/fixtures';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../../errors.js';
import { lzav } from './index.js';
import { referenceDecodeV3 } from './lzav-reference.test.helper.js';

// Hand-made format-3 streams (mref 5): 8 literals, one reference, then the closing 9 literals.
const LITERALS = [11, 12, 13, 14, 15, 16, 17, 18];
const CLOSING = [21, 22, 23, 24, 25, 26, 27, 28, 29];
/** `reference` is the reference block: header byte, offset byte(s), length byte(s). */
const stream = (reference: number[]) => Uint8Array.of(0x35, 0x08, ...LITERALS, ...reference, 0x09, ...CLOSING);

const isCorrupt = (error: unknown) => BagError.isInstance(error) && error.code === 'CORRUPT_DATA';

describe('lzav: references outside the decoded output (format-3 offset checks in decode.ts)', () => {
  test('a valid reference 8 bytes back decodes to exactly the bytes it copies (control for the cases below)', () => {
    // Header 0x91: type 1, low offset bits 2, length nibble 1 (+4 for mref 5 = 5 bytes); offset byte 0 → distance 8.
    const good = stream([0x91, 0x00]);
    const expected = Uint8Array.of(...LITERALS, ...LITERALS.slice(0, 5), ...CLOSING);
    assert.deepEqual(lzav.decompress(good, expected.length), expected);
    assert.deepEqual(referenceDecodeV3(good, expected.length), expected);
  });

  // Kills the mutant that deletes `dist > op`: the reference would read before the start of the output and the
  // decoder would return 22 bytes with zeros where nothing was ever written, length right and content wrong.
  test('a reference before the start of the output (distance 16 after 8 bytes) is CORRUPT_DATA', () => {
    const before = stream([0x11, 0x01]); // offset byte 1 → offset 4, shifted by the literal block's 2 carry bits: 16
    assert.throws(() => lzav.decompress(before, 22), isCorrupt);
    assert.equal(referenceDecodeV3(before, 22), undefined);
  });

  test('a reference closer than the minimum offset 8 (distance 4) is CORRUPT_DATA', () => {
    const close = stream([0x51, 0x00]); // low offset bits 1 → offset 1 → distance 4
    assert.throws(() => lzav.decompress(close, 22), isCorrupt);
    assert.equal(referenceDecodeV3(close, 22), undefined);
  });

  // Kills the mutant that deletes both offset checks: copyMatch with distance 0 and a long length never advances,
  // so the decoder would spin forever. The suite's per-test timeout and watchdog (@vlink/fixtures/test) turn that
  // into a failure naming this test instead of a hung run.
  test('a zero distance with a 40-byte length is CORRUPT_DATA, not an endless copy', () => {
    const zero = stream([0x10, 0x00, 0x14]); // length nibble 0: 16 + 20 + 4 = 40 bytes from distance 0
    assert.throws(() => lzav.decompress(zero, 57), isCorrupt);
    assert.equal(referenceDecodeV3(zero, 57), undefined);
  });

  test('a long reference reaching before the start (the copyWithin path) is CORRUPT_DATA', () => {
    // distance 144 > 8 decoded bytes, 40-byte length: copyWithin would count a negative start from the end.
    const far = stream([0x10, 0x09, 0x14]); // offset byte 9 → offset 36, shifted by 2 carry bits: distance 144
    assert.throws(() => lzav.decompress(far, 57), isCorrupt);
    assert.equal(referenceDecodeV3(far, 57), undefined);
  });
});

describe('lzav: the test reference decoder', () => {
  test('reproduces every vector of the C reference (5.16, both modes) byte for byte', () => {
    const names = readdirSync(fixturePath('lzav')).filter((f) => f.endsWith('.raw'));
    assert.ok(names.length >= 7);
    for (const raw of names) {
      const expected = new Uint8Array(readFileSync(fixturePath('lzav', raw)));
      for (const ext of ['lzav', 'lzavhi']) {
        const packed = new Uint8Array(readFileSync(fixturePath('lzav', raw.replace('.raw', `.${ext}`))));
        assert.deepEqual(referenceDecodeV3(packed, expected.length), expected, `${raw} .${ext}`);
      }
    }
  });
});
