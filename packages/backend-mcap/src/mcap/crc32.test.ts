import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { patternBytes } from '@vlink/bag-core/testing';
import {
  CRC32_IMPLEMENTATION,
  crc32,
  crc32Append,
  crc32Combine,
  nativeCrc32Implementations,
  tableCrc32Append,
} from './crc32.js';

const CHECK = new TextEncoder().encode('123456789');

describe('CRC-32', () => {
  test('the chosen implementation gives the standard check value, in one go and appended', () => {
    assert.equal(crc32(CHECK), 0xcbf43926);
    assert.equal(crc32Append(crc32(CHECK.subarray(0, 4)), CHECK.subarray(4)), 0xcbf43926);
    assert.equal(crc32(new Uint8Array(0)), 0);
    const g = globalThis as { Bun?: unknown; Deno?: unknown };
    // On Node the optional @node-rs/crc32 (installed in this repository) beats zlib's software CRC.
    const expected = g.Bun !== undefined ? 'Bun.hash.crc32' : g.Deno !== undefined ? 'zlib.crc32' : '@node-rs/crc32';
    assert.equal(CRC32_IMPLEMENTATION, expected, 'the fastest native one is used where the runtime has it');
  });

  test('native and table implementations agree on every length and split', () => {
    const impls = { table: tableCrc32Append, ...nativeCrc32Implementations() };
    assert.ok(Object.keys(impls).length >= 2, `a native implementation exists here: ${Object.keys(impls)}`);
    if (CRC32_IMPLEMENTATION === '@node-rs/crc32')
      assert.ok('zlib.crc32' in impls, 'zlib.crc32 is held against it too');
    const big = patternBytes(300_007, 5);
    for (const length of [0, 1, 7, 8, 9, 63, 64, 65, 1000, 4096, 300_007]) {
      const bytes = big.subarray(0, length);
      const values = Object.entries(impls).map(([name, f]) => [name, f(0, bytes)] as const);
      for (const [name, value] of values) assert.equal(value, values[0]![1], `${name} at ${length} bytes`);
      // Appending in pieces (a view with an offset included) gives the whole's value.
      for (const [name, f] of Object.entries(impls)) {
        const cut = length >> 1;
        assert.equal(f(f(0, bytes.subarray(0, cut)), bytes.subarray(cut)), values[0]![1], `${name} split ${length}`);
      }
    }
  });

  test('combine gives the CRC of the concatenation', () => {
    const a = patternBytes(12_345, 1);
    const b = patternBytes(70_001, 2);
    const ab = new Uint8Array(a.length + b.length);
    ab.set(a);
    ab.set(b, a.length);
    assert.equal(crc32Combine(crc32(a), crc32(b), b.length), crc32(ab));
    assert.equal(crc32Combine(crc32(a), 0, 0), crc32(a));
    assert.equal(crc32Combine(0, crc32(b), b.length), crc32(b));
    assert.equal(crc32Combine(crc32(CHECK.subarray(0, 1)), crc32(CHECK.subarray(1)), 8), 0xcbf43926);
  });
});
