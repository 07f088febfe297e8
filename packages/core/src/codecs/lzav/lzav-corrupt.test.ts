import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, testSeed } from '@vlink/fixtures/test';
import { BagError } from '../../errors.js';
import { fixturesDir } from '@vlink/fixtures';
import { lzav } from './index.js';
import { referenceDecodeV3 } from './lzav-reference.test.helper.js';

const dir = join(fixturesDir, 'lzav');
const read = (file: string): Uint8Array => new Uint8Array(readFileSync(join(dir, file)));

function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
}

function assertCode(fn: () => unknown, code: string, label: string): void {
  assert.throws(fn, (error: unknown) => BagError.isInstance(error) && error.code === code, label);
}

/**
 * Decoding damaged input may succeed (with exactly `rawLength` bytes) or throw CORRUPT_DATA; nothing else. For a
 * format-3 stream the outcome must match the byte-at-a-time reference decoder: the same bytes, or refused by both.
 */
function decodeOrCorrupt(data: Uint8Array, rawLength: number, label: string): Uint8Array | undefined {
  const expected = data.length > 0 && data[0] >>> 4 === 3 ? referenceDecodeV3(data, rawLength) : null;
  try {
    const out = lzav.decompress(data, rawLength);
    assert.equal(out.length, rawLength, label);
    if (expected !== null) assert.deepEqual(out, expected, `${label}: content differs from the reference decoder`);
    return out;
  } catch (error) {
    if (error instanceof assert.AssertionError) throw error;
    if (!BagError.isInstance(error) || error.code !== 'CORRUPT_DATA') assert.fail(`${label}: ${String(error)}`);
    if (expected !== null) assert.equal(expected, undefined, `${label}: refused, the reference decoder accepts it`);
    return undefined;
  }
}

const small = ['one-byte', 'tiny-16', 'text-short', 'memset-256', 'zeros-1m'];
const vectors = [...small, 'pointcloud-64k', 'random-64k'].flatMap((name) =>
  ['lzav', 'lzavhi'].map((ext) => ({
    label: `${name}.${ext}`,
    packed: read(`${name}.${ext}`),
    raw: read(`${name}.raw`),
  })),
);
const mine = (() => {
  const rand = xorshift(42);
  const raw = new Uint8Array(3000);
  for (let i = 0; i < raw.length; i++) raw[i] = i > 40 && rand() % 3 !== 0 ? raw[i - 8 - (rand() % 30)] : rand() & 0xff;
  return [3, 9].map((level) => ({ label: `own-level-${level}`, packed: lzav.compress(raw, { level }), raw }));
})();

describe('lzav: damaged input', () => {
  it('rejects every truncation of the small vectors and of our own streams', () => {
    for (const v of [...vectors.filter((v) => small.some((s) => v.label.startsWith(s))), ...mine]) {
      for (let cut = 0; cut < v.packed.length; cut++) {
        assertCode(() => lzav.decompress(v.packed.subarray(0, cut), v.raw.length), 'CORRUPT_DATA', `${v.label}@${cut}`);
      }
    }
  });

  it('rejects truncations of the 64 KiB vectors (sampled)', () => {
    for (const v of vectors.filter((v) => v.label.includes('64k'))) {
      const n = v.packed.length;
      for (let cut = 0; cut < n; cut += cut < 64 || cut > n - 64 ? 1 : 509) {
        assertCode(() => lzav.decompress(v.packed.subarray(0, cut), v.raw.length), 'CORRUPT_DATA', `${v.label}@${cut}`);
      }
    }
  });

  it('rejects a wrong rawLength', () => {
    for (const v of [...vectors, ...mine]) {
      for (const delta of [-9, -1, 1, 8, 1000]) {
        const length = v.raw.length + delta;
        if (length <= 0) continue;
        assertCode(() => lzav.decompress(v.packed, length), 'CORRUPT_DATA', `${v.label} ${delta}`);
      }
    }
  });

  it('survives random bit flips and byte changes: decoded or CORRUPT_DATA, never longer than rawLength', () => {
    const rand = xorshift(testSeed('lzav bit flips', 7));
    const pool = [...vectors.filter((v) => v.packed.length < 5000), ...mine];
    for (let round = 0; round < 3000; round++) {
      const v = pool[rand() % pool.length];
      const bad = v.packed.slice();
      for (let k = 1 + (rand() % 3); k > 0; k--) {
        const at = rand() % bad.length;
        bad[at] = rand() % 2 === 0 ? bad[at] ^ (1 << (rand() % 8)) : rand() & 0xff;
      }
      decodeOrCorrupt(bad, v.raw.length, `${v.label} round ${round}`);
    }
  });

  it('survives pure garbage of many lengths and both format ids', () => {
    const rand = xorshift(testSeed('lzav garbage', 11));
    for (let round = 0; round < 2000; round++) {
      const bad = new Uint8Array(rand() % 200);
      for (let i = 0; i < bad.length; i++) bad[i] = rand() & 0xff;
      if (bad.length > 0 && round % 2 === 0) bad[0] = (round % 4 === 0 ? 0x30 : 0x20) | (1 + (rand() % 6));
      decodeOrCorrupt(bad, 1 + (rand() % 5000), `garbage round ${round}`);
    }
  });

  it('refuses huge claimed lengths without allocating them', () => {
    const v = read('text-short.lzav');
    for (const length of [1 << 20, 256 * 1024 * 1024, 0x7fffffff]) {
      assertCode(() => lzav.decompress(v, length), 'CORRUPT_DATA', `length ${length}`);
    }
    // 8 literals, then a reference (offset 8) whose 5-byte length claims just over 2 GiB, then 9 closing literals.
    const bomb = Uint8Array.of(0x35, 0x08, 1, 2, 3, 4, 5, 6, 7, 8, 0x90, 0x00, 0xff, 0xff, 0xff, 0xff, 0x07, 0x09);
    const stream = new Uint8Array(bomb.length + 9);
    stream.set(bomb);
    assertCode(() => lzav.decompress(stream, 0x7fffffff), 'CORRUPT_DATA', 'bomb');
  });

  it('still decodes legitimately huge ratios (32 MiB from a few dozen bytes)', () => {
    const zeros = new Uint8Array(32 << 20);
    const packed = lzav.compress(zeros);
    assert.ok(packed.length < 40);
    const out = lzav.decompress(packed, zeros.length);
    assert.equal(out.length, zeros.length);
    assert.ok(out.every((b) => b === 0));
  });

  it('rejects unknown formats, bad mref values and mismatched empty input', () => {
    const good = read('text-short.lzav');
    for (const prefix of [0x05, 0x15, 0x45, 0xf5, 0x30, 0x37, 0x3f, 0x20, 0x27]) {
      const bad = good.slice();
      bad[0] = prefix;
      assertCode(() => lzav.decompress(bad, 144), 'CORRUPT_DATA', `prefix ${prefix.toString(16)}`);
    }
    assertCode(() => lzav.decompress(new Uint8Array(0), 1), 'CORRUPT_DATA', 'empty stream');
    assertCode(() => lzav.decompress(good, 0), 'CORRUPT_DATA', 'zero length');
  });

  it('rejects invalid arguments with INVALID_ARGUMENT', () => {
    const good = read('one-byte.lzav');
    for (const length of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, 2 ** 53]) {
      assertCode(() => lzav.decompress(good, length), 'INVALID_ARGUMENT', `length ${length}`);
    }
    assertCode(() => lzav.decompress('x' as unknown as Uint8Array, 1), 'INVALID_ARGUMENT', 'string data');
    assertCode(() => lzav.compress([1, 2] as unknown as Uint8Array), 'INVALID_ARGUMENT', 'array data');
    assertCode(
      () => lzav.compress(new Uint8Array(4), { level: 'hi' as unknown as number }),
      'INVALID_ARGUMENT',
      'level',
    );
  });
});
