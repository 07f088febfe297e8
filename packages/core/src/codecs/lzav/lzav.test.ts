import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from '@vlink/fixtures/test';
import { fixturesDir } from '@vlink/fixtures';
import { lzav } from './index.js';

interface Vector {
  name: string;
  raw_size: number;
  raw_sha256: string;
  lzav_size: number;
  lzavhi_size: number;
}

const dir = join(fixturesDir, 'lzav');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as { vectors: Vector[] };
const read = (file: string): Uint8Array => new Uint8Array(readFileSync(join(dir, file)));

/** Deterministic xorshift32 bytes, so a failure reproduces. */
function pseudoRandom(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 0xff;
  }
  return out;
}

/** Text-like data: words drawn from a small vocabulary, the common case for recorded messages. */
function wordy(length: number, seed: number): Uint8Array {
  const words = ['frame', 'url', 'elapsed', 'camera', 'lidar', 'points', '/vehicle/odom', 'x', 'y', 'z', '0.125'];
  const noise = pseudoRandom(length, seed);
  const out = new Uint8Array(length);
  let i = 0;
  for (let k = 0; i < length; k++) {
    for (const ch of words[noise[k] % words.length]) if (i < length) out[i++] = ch.charCodeAt(0);
    if (i < length) out[i++] = 32;
  }
  return out;
}

function roundTrip(data: Uint8Array, level: number): Uint8Array {
  const packed = lzav.compress(data, { level });
  assert.deepEqual(lzav.decompress(packed, data.length), data);
  return packed;
}

describe('lzav: reference vectors (LZAV 5.16)', () => {
  it('the manifest lists vectors whose raw inputs are intact', () => {
    assert.ok(manifest.vectors.length >= 7);
    for (const v of manifest.vectors) {
      const raw = read(`${v.name}.raw`);
      assert.equal(raw.length, v.raw_size, v.name);
      assert.equal(createHash('sha256').update(raw).digest('hex'), v.raw_sha256, v.name);
    }
  });

  for (const v of manifest.vectors) {
    it(`${v.name}: .lzav and .lzavhi decode to .raw exactly`, () => {
      const raw = read(`${v.name}.raw`);
      for (const ext of ['lzav', 'lzavhi']) {
        const packed = read(`${v.name}.${ext}`);
        assert.equal(packed.length, ext === 'lzav' ? v.lzav_size : v.lzavhi_size);
        assert.deepEqual(lzav.decompress(packed, raw.length), raw, `${v.name}.${ext}`);
      }
    });

    it(`${v.name}: our compressor reproduces the reference bytes at both levels`, () => {
      const raw = read(`${v.name}.raw`);
      assert.deepEqual(roundTrip(raw, 3), read(`${v.name}.lzav`));
      assert.deepEqual(roundTrip(raw, 9), read(`${v.name}.lzavhi`));
    });
  }
});

describe('lzav: round trips', () => {
  const sizes = [1, 2, 8, 9, 15, 16, 17, 31, 32, 33, 100, 255, 256, 4096, 65536, 300000];
  for (const size of sizes) {
    it(`${size} bytes: random, text-like and repetitive, levels 3 and 4`, () => {
      const inputs = [pseudoRandom(size, size + 1), wordy(size, size + 7), new Uint8Array(size).fill(0x5a)];
      for (const data of inputs) for (const level of [3, 4]) roundTrip(data, level);
    });
  }

  it('empty input compresses to an empty stream and back', () => {
    assert.equal(lzav.compress(new Uint8Array(0)).length, 0);
    assert.equal(lzav.compress(new Uint8Array(0), { level: 9 }).length, 0);
    assert.equal(lzav.decompress(new Uint8Array(0), 0).length, 0);
  });

  it('compresses text and runs well, and expands incompressible data by only a few bytes', () => {
    const text = wordy(65536, 3);
    assert.ok(roundTrip(text, 3).length < text.length / 2);
    assert.ok(roundTrip(text, 4).length <= roundTrip(text, 3).length);
    assert.ok(roundTrip(new Uint8Array(100000), 3).length < 64);
    const noise = pseudoRandom(65536, 99);
    assert.ok(roundTrip(noise, 3).length <= noise.length + 16);
    assert.ok(roundTrip(noise, 9).length <= noise.length + 16);
  });

  it('covers overlapping runs of every short period and long far matches', () => {
    for (let period = 1; period <= 40; period++) {
      const data = new Uint8Array(5000);
      data.set(pseudoRandom(period, period));
      for (let i = period; i < data.length; i++) data[i] = data[i - period];
      roundTrip(data, 3);
      roundTrip(data, 9);
    }
    const far = pseudoRandom(600000, 5);
    far.copyWithin(560000, 1000, 30000); // ~540 KiB back: 3-byte offsets with carry bits
    roundTrip(far, 3);
  });

  it('writes the format-3 prefix with mref 5 below 256 KiB and mref 6 above (mref 5 always at level > 3)', () => {
    assert.equal(lzav.compress(wordy(1000, 1))[0], 0x35);
    assert.equal(lzav.compress(wordy(262143, 1))[0], 0x35);
    assert.equal(lzav.compress(wordy(262144, 1))[0], 0x36);
    assert.equal(lzav.compress(wordy(262144, 1), { level: 4 })[0], 0x35);
  });

  it('does not keep state between calls: the same input gives the same output', () => {
    const a = wordy(20000, 11);
    const first = lzav.compress(a, { level: 9 });
    lzav.compress(pseudoRandom(300000, 2), { level: 9 });
    lzav.compress(pseudoRandom(300000, 3));
    assert.deepEqual(lzav.compress(a, { level: 9 }), first);
  });

  it('accepts views into larger buffers', () => {
    const backing = wordy(10000, 4);
    const view = backing.subarray(1234, 7777);
    const packed = lzav.compress(view);
    assert.deepEqual(lzav.decompress(packed, view.length), view.slice());
    const padded = new Uint8Array(packed.length + 10);
    padded.set(packed, 5);
    assert.deepEqual(lzav.decompress(padded.subarray(5, 5 + packed.length), view.length), view.slice());
  });
});
