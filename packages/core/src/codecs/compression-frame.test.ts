import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { fixturesDir } from '@vlink/fixtures';
import {
  CompressionDecider,
  FRAME_FOOTER_MAGIC,
  FRAME_HEADER_MAGIC,
  FRAME_OVERHEAD,
  MAX_COMPRESS_INPUT,
  MAX_DECOMPRESSED_SIZE,
  compressFrame,
  decompressFrame,
  frameOriginalSize,
  isCompressionFrame,
} from './compression-frame.js';
import { lzav } from './lzav/index.js';

const fixture = (file: string): Uint8Array => new Uint8Array(readFileSync(join(fixturesDir, 'lzav', file)));
const isCorrupt = (e: unknown): boolean => BagError.isInstance(e) && e.code === 'CORRUPT_DATA';

function noise(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let s = seed;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    out[i] = s & 0xff;
  }
  return out;
}
const text = (length: number): Uint8Array =>
  new TextEncoder().encode('frame by frame, '.repeat(Math.ceil(length / 16))).subarray(0, length);

/** Builds a frame by hand around a given LZAV stream. */
function frame(size: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(FRAME_OVERHEAD + body.length);
  out.set(FRAME_HEADER_MAGIC);
  new DataView(out.buffer).setUint32(4, size, false);
  out.set(body, 8);
  out.set(FRAME_FOOTER_MAGIC, out.length - 4);
  return out;
}

describe('compression frame', () => {
  it("has VLink's constants", () => {
    assert.deepEqual([...FRAME_HEADER_MAGIC], [0x17, 0x49, 0xb2, 0x6f]);
    assert.deepEqual([...FRAME_FOOTER_MAGIC], [0xa7, 0x05, 0xed, 0x71]);
    assert.equal(FRAME_OVERHEAD, 12);
    assert.equal(MAX_COMPRESS_INPUT, 1048576);
    assert.equal(MAX_DECOMPRESSED_SIZE, 268435456);
  });

  it('lays out magic | u32 BE size | lzav stream | footer, and round-trips at both levels', () => {
    const data = text(1000);
    for (const level of [3, 4]) {
      const blob = compressFrame(data, level)!;
      assert.deepEqual([...blob.subarray(0, 8)], [0x17, 0x49, 0xb2, 0x6f, 0, 0, 0x03, 0xe8]);
      assert.deepEqual([...blob.subarray(blob.length - 4)], [0xa7, 0x05, 0xed, 0x71]);
      assert.deepEqual(blob.subarray(8, blob.length - 4), lzav.compress(data, { level }));
      assert.ok(isCompressionFrame(blob));
      assert.equal(frameOriginalSize(blob), 1000);
      assert.deepEqual(decompressFrame(blob), data);
    }
  });

  it('picks mref 6 (prefix 0x36) for 256 KiB..1 MiB at level 3 and the hi compressor above 3', () => {
    const data = text(MAX_COMPRESS_INPUT);
    assert.equal(compressFrame(data, 3)![8], 0x36);
    assert.equal(compressFrame(data, 5)![8], 0x35);
    assert.deepEqual(decompressFrame(compressFrame(data, 3)!), data);
  });

  it('reads frames made around the reference C streams', () => {
    for (const name of ['text-short', 'memset-256', 'zeros-1m', 'pointcloud-64k']) {
      const raw = fixture(`${name}.raw`);
      for (const ext of ['lzav', 'lzavhi'])
        assert.deepEqual(decompressFrame(frame(raw.length, fixture(`${name}.${ext}`))), raw);
    }
  });

  it('does not compress empty input or input over 1 MiB', () => {
    assert.equal(compressFrame(new Uint8Array(0), 3), undefined);
    assert.equal(compressFrame(new Uint8Array(MAX_COMPRESS_INPUT + 1), 3), undefined);
    assert.ok(compressFrame(new Uint8Array(MAX_COMPRESS_INPUT), 3) !== undefined);
  });

  it('detects frames by length and both magics only', () => {
    const blob = compressFrame(text(300), 3)!;
    assert.ok(isCompressionFrame(blob));
    assert.ok(isCompressionFrame(frame(1, new Uint8Array(1))));
    assert.ok(!isCompressionFrame(frame(1, new Uint8Array(0)))); // 12 bytes: too short
    for (const at of [0, 3, blob.length - 4, blob.length - 1]) {
      const bad = blob.slice();
      bad[at] ^= 1;
      assert.ok(!isCompressionFrame(bad), `byte ${at}`);
    }
    assert.ok(!isCompressionFrame(text(300)));
  });

  it('refuses bad sizes, bad bodies and non-frames with CORRUPT_DATA', () => {
    const data = text(500);
    const body = lzav.compress(data);
    assert.throws(() => decompressFrame(frame(0, body)), isCorrupt);
    assert.throws(() => decompressFrame(frame(MAX_DECOMPRESSED_SIZE + 1, body)), isCorrupt);
    assert.throws(() => decompressFrame(frame(0xffffffff, body)), isCorrupt);
    assert.throws(() => decompressFrame(frame(499, body)), isCorrupt);
    assert.throws(() => decompressFrame(frame(501, body)), isCorrupt);
    assert.throws(() => decompressFrame(frame(MAX_DECOMPRESSED_SIZE, body)), isCorrupt);
    assert.throws(() => decompressFrame(data), isCorrupt);
    assert.throws(() => frameOriginalSize(new Uint8Array(7)), isCorrupt);
    const blob = compressFrame(data, 3)!;
    for (let cut = 13; cut < blob.length - 4; cut++) {
      const truncated = new Uint8Array(cut + 4);
      truncated.set(blob.subarray(0, cut));
      truncated.set(FRAME_FOOTER_MAGIC, cut);
      assert.throws(() => decompressFrame(truncated), isCorrupt, `cut ${cut}`);
    }
  });
});

describe('CompressionDecider (VLink writer rules)', () => {
  it('stores raw when disabled, below startSize (128 by default) or for ignored URLs', () => {
    const data = text(4096);
    assert.equal(new CompressionDecider({ enabled: false }).maybeCompress('/a', data), data);
    const decider = new CompressionDecider({ enabled: true, ignoreUrls: ['/ignored'] });
    const small = text(127);
    assert.equal(decider.maybeCompress('/a', small), small);
    assert.equal(decider.failureCount('/a'), 0);
    assert.ok(isCompressionFrame(decider.maybeCompress('/a', text(128))));
    assert.equal(decider.maybeCompress('/ignored', data), data);
    assert.equal(decider.failureCount('/ignored'), 0);
    const custom = new CompressionDecider({ enabled: true, startSize: 1000 });
    assert.equal(custom.maybeCompress('/a', text(999)).length, 999);
    assert.ok(isCompressionFrame(custom.maybeCompress('/a', text(1000))));
  });

  it('keeps a frame only when it is smaller than 95% of the payload', () => {
    const decider = new CompressionDecider({ enabled: true });
    const below = text(400);
    assert.ok(compressFrame(below, 3)!.length < below.length * 0.95);
    assert.ok(isCompressionFrame(decider.maybeCompress('/t', below)));
    const random = noise(400, 9);
    assert.ok(compressFrame(random, 3)!.length >= random.length * 0.95);
    assert.equal(decider.maybeCompress('/r', random), random);
    assert.equal(decider.failureCount('/r'), 1);
    // A payload with 8% redundancy: the frame saves a few bytes, but not 5%.
    const marginal = noise(1000, 4);
    marginal.copyWithin(900, 0, 60);
    const size = compressFrame(marginal, 3)!.length;
    assert.ok(size < marginal.length && size >= marginal.length * 0.95, `frame ${size}`);
    assert.equal(decider.maybeCompress('/m', marginal), marginal);
  });

  it('gives up on a URL after 5 failures in a row; a success in between resets the count', () => {
    const decider = new CompressionDecider({ enabled: true });
    const bad = noise(1000, 1);
    const good = text(1000);
    for (let i = 1; i <= 4; i++) {
      decider.maybeCompress('/x', bad);
      assert.equal(decider.failureCount('/x'), i);
    }
    assert.ok(isCompressionFrame(decider.maybeCompress('/x', good)));
    assert.equal(decider.failureCount('/x'), 0);
    for (let i = 0; i < 5; i++) decider.maybeCompress('/x', bad);
    assert.equal(decider.failureCount('/x'), 5);
    assert.equal(decider.maybeCompress('/x', good), good); // never tried again
    assert.equal(decider.failureCount('/x'), 5);
    assert.ok(isCompressionFrame(decider.maybeCompress('/y', good))); // other URLs unaffected
  });

  it('counts payloads over 1 MiB as failures and never compresses them', () => {
    const decider = new CompressionDecider({ enabled: true });
    const big = new Uint8Array(MAX_COMPRESS_INPUT + 1);
    assert.equal(decider.maybeCompress('/big', big), big);
    assert.equal(decider.failureCount('/big'), 1);
  });

  it('snapshot/restore brings the counters back (rollback)', () => {
    const decider = new CompressionDecider({ enabled: true, level: 4 });
    const bad = noise(500, 3);
    decider.maybeCompress('/a', bad);
    const saved = decider.snapshot();
    for (let i = 0; i < 4; i++) decider.maybeCompress('/a', bad);
    decider.maybeCompress('/b', bad);
    assert.equal(decider.failureCount('/a'), 5);
    assert.equal(saved.get('/a'), 1); // the snapshot is a copy
    decider.restore(saved);
    assert.equal(decider.failureCount('/a'), 1);
    assert.equal(decider.failureCount('/b'), 0);
    assert.ok(isCompressionFrame(decider.maybeCompress('/a', text(500))));
    assert.equal(decider.failureCount('/a'), 0);
    assert.equal(saved.get('/a'), 1); // restoring does not tie the snapshot to the live counters
  });

  it('validates its options', () => {
    const invalid = (e: unknown): boolean => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT';
    assert.throws(() => new CompressionDecider({ enabled: true, startSize: -1 }), invalid);
    assert.throws(() => new CompressionDecider({ enabled: true, startSize: 1.5 }), invalid);
    assert.throws(() => new CompressionDecider({ enabled: true, level: Number.NaN }), invalid);
  });
});
