import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { loadCodecs, type Codecs } from '../codecs.js';
import { ByteWriter } from './byte-writer.js';
import { ChunkLoader } from './chunk-loader.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { Opcode } from './constants.js';
import { zstdContentSize } from './zstd-frame.js';

const codecs = await loadCodecs();

describe('zstd frame headers', () => {
  test('the content size of our own frames, of concatenated and skippable frames', () => {
    for (const size of [1, 100, 4096, 300_000]) {
      assert.equal(zstdContentSize(codecs['zstd']!.compress!(patternBytes(size, size), 1)), size);
    }
    const a = codecs['zstd']!.compress!(patternBytes(1000, 1), 1);
    const b = codecs['zstd']!.compress!(patternBytes(70_000, 2), 3);
    const skippable = Uint8Array.of(0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9);
    assert.equal(zstdContentSize(concat(a, skippable, b)), 71_000);
    assert.equal(zstdContentSize(a.subarray(0, a.length - 1)), 'invalid');
    assert.equal(zstdContentSize(patternBytes(64, 3)), 'invalid');
  });

  test('a chunk claiming more than its frames (or lz4 at all) can hold is refused before anything that size is allocated', () => {
    const records = patternBytes(50_000, 4);
    const stored = codecs['zstd']!.compress!(records, 1);
    const asked: number[] = [];
    const spy: Codecs = {
      zstd: {
        decompress: (data, size) => {
          asked.push(size);
          return codecs['zstd']!.decompress(data, size);
        },
      },
    };
    for (const claim of [50_000, 50_001, 40_000_000]) {
      const bytes = chunkRecord(stored, claim);
      const loader = new ChunkLoader(new MemoryReadable(bytes), spy, true, 'mem.vcap');
      if (claim === 50_000) assert.equal(loader.load(0, bytes.length).bytes.length, 50_000);
      else
        assert.throws(
          () => loader.load(0, bytes.length),
          (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /claims/.test(e.message),
        );
    }
    assert.deepEqual(asked, [50_000]);
    // lz4 cannot expand more than ~255:1, so a larger claim is refused before the codec sees it too.
    const lz4: Codecs = {
      lz4: {
        decompress: (_data, size) => {
          asked.push(size);
          return new Uint8Array(size);
        },
      },
    };
    const bytes = chunkRecord(stored, stored.length * 1000, 'lz4');
    assert.throws(
      () => new ChunkLoader(new MemoryReadable(bytes), lz4, true, 'mem.vcap').load(0, bytes.length),
      /impossible lz4 ratio/,
    );
    assert.deepEqual(asked, [50_000]);
  });
});

function chunkRecord(stored: Uint8Array, uncompressedSize: number, compression = 'zstd'): Uint8Array {
  const w = new ByteWriter(stored.length + 64);
  const at = w.beginRecord(Opcode.Chunk);
  w.u64(0);
  w.u64(0);
  w.u64(uncompressedSize);
  w.u32(0);
  w.string(compression);
  w.u64(stored.length);
  w.raw(stored);
  w.endRecord(at);
  return w.view8().slice();
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
