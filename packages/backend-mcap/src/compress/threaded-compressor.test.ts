import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { resolveWriterConfig, type RecordingContext } from '@vlink/bag-core';
import type { HelperThreadOptions } from '@vlink/bag-core/internal';
import { failThread } from '@vlink/bag-core/internal/thread-control';
import { noiseBytes, patternBytes } from '@vlink/bag-core/testing';
import { loadCodecs } from '../codecs.js';
import { MemoryWritable } from '../io/memory-writable.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { crc32 } from '../mcap/crc32.js';
import { McapFileReader } from '../mcap/mcap-reader.js';
import { McapWriter } from '../mcap/mcap-writer.js';
import { openChunkCompressor } from './open-chunk-compressor.js';
import type { PipelinedCompressor } from './pipelined-compressor.js';
import { ThreadedCompressor } from './threaded-compressor.js';

const KiB = 1024;
const MiB = 1024 * KiB;

/** Half pattern, half repeated bytes: compresses, but not to nothing. */
function records(size: number, seed: number): Uint8Array {
  const out = patternBytes(size, seed);
  for (let i = 0; i < size; i += 128) out.fill(seed & 0xff, i, Math.min(size, i + 64));
  return out;
}

/** A compressor whose thread has started: until then it takes no chunk (`start` → false). */
async function startedCompressor(capacity: number): Promise<ThreadedCompressor> {
  const c = new ThreadedCompressor(capacity);
  for (let i = 0; !c.ready; i++) {
    if (i > 3000) throw new Error('the compressor thread did not start within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return c;
}

describe('ThreadedCompressor (zstd on a thread of its own)', () => {
  test('every chunk comes back as what the codec makes of it, two in flight, in order', async () => {
    const codecs = await loadCodecs();
    const c = await startedCompressor(256 * KiB);
    try {
      const sizes = [1, 100, 4096, 70_000, 256 * KiB, 3, 200_000, 131_072];
      const given = sizes.map((size, i) => records(size, i + 1));
      // Always one chunk ahead: start k, then collect k−1 (what McapWriter does).
      assert.equal(c.start(given[0]!, 1), true);
      for (let k = 1; k <= given.length; k++) {
        if (k < given.length) assert.equal(c.start(given[k]!, 1), true);
        const { records: back, compressed } = c.finish();
        const expected = given[k - 1]!;
        assert.deepEqual(back, expected, `chunk ${k - 1}: the records as given`);
        assert.ok(compressed, `chunk ${k - 1} compressed`);
        assert.deepEqual(codecs.zstd!.decompress(compressed.slice(), expected.length), expected);
        assert.deepEqual(compressed, codecs.zstd!.compress!(expected, 1), 'the same bytes as the codec on this thread');
      }
    } finally {
      c.close();
    }
  });

  test('asked for, the CRCs of the records and of the compressed bytes come back with them (none when not asked)', async () => {
    const c = await startedCompressor(64 * KiB);
    try {
      const compressible = records(60_000, 3);
      assert.equal(c.start(compressible, 1, true), true);
      const done = c.finish();
      assert.ok(done.compressed);
      assert.equal(done.recordsCrc, crc32(compressible));
      assert.equal(done.compressedCrc, crc32(done.compressed));
      // Noise does not fit: the records' CRC alone.
      const noise = noiseBytes(64 * KiB, 4);
      assert.equal(c.start(noise, 1, true), true);
      const raw = c.finish();
      assert.equal(raw.compressed, undefined);
      assert.equal(raw.recordsCrc, crc32(noise));
      assert.equal(raw.compressedCrc, undefined);
      assert.equal(c.start(compressible, 1), true);
      const plain = c.finish();
      assert.equal(plain.recordsCrc, undefined);
      assert.equal(plain.compressedCrc, undefined);
    } finally {
      c.close();
    }
  });

  test('a result that does not fit comes back as the records alone; a chunk over capacity is refused', async () => {
    const c = await startedCompressor(64 * KiB);
    try {
      const random = noiseBytes(64 * KiB, 5);
      assert.equal(c.start(random, 1), true);
      const { records: back, compressed } = c.finish();
      assert.equal(compressed, undefined, 'zstd output of 64 KiB of noise is larger than 64 KiB');
      assert.deepEqual(back, random);
      assert.equal(c.start(new Uint8Array(64 * KiB + 1), 1), false);
    } finally {
      c.close();
    }
  });

  test('finished() says whether finish() would return without waiting', async () => {
    const c = await startedCompressor(256 * KiB);
    try {
      assert.equal(c.finished(), false, 'nothing in it');
      assert.equal(c.start(records(200 * KiB, 3), 1), true);
      for (let i = 0; i < 3000 && !c.finished(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(c.finished(), true);
      const started = performance.now();
      assert.ok(c.finish().compressed);
      assert.ok(performance.now() - started < 50, 'the result was there');
      assert.equal(c.finished(), false, 'collected');
    } finally {
      c.close();
    }
  });

  test('misuse is an INTERNAL error: finish with nothing started, a third chunk before collecting', async () => {
    const c = await startedCompressor(4 * KiB);
    try {
      assert.throws(() => c.finish(), { code: 'INTERNAL' });
      c.start(records(100, 1), 1);
      c.start(records(100, 2), 1);
      assert.throws(() => c.start(records(100, 3), 1), { code: 'INTERNAL' });
      c.finish();
      c.finish();
    } finally {
      c.close();
    }
    assert.throws(() => c.start(records(10, 1), 1), { code: 'CLOSED' });
  });

  test('the thread wakes for every chunk and for close, whenever they come (no lost wake-up, no polling)', async () => {
    for (let i = 0; i < 20; i++) {
      const c = new ThreadedCompressor(16 * KiB);
      // Idle for a moment (the thread sleeps, or is still loading its codec), or not at all.
      if (i % 2 === 0) await new Promise((resolve) => setTimeout(resolve, i % 4 === 0 ? 5 : 0));
      // A thread still starting takes no chunk (the writer then compresses it itself): finish only what it took.
      const taken = c.start(records(1000 + i, i), 1);
      if (taken && i % 3 === 0) c.finish();
      if (i % 5 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      const started = performance.now();
      c.close();
      assert.ok(performance.now() - started < 5000, `close took ${performance.now() - started} ms`);
    }
  });
});

describe('ThreadedCompressor.open: the compressor of a file that closed cleanly serves the next file of its thread', () => {
  /** `open` until its thread has started (the first of a capacity starts one). */
  async function opened(capacity: number): Promise<ThreadedCompressor> {
    const c = ThreadedCompressor.open(capacity, 'a.vcap');
    for (let i = 0; !c.ready; i++) {
      if (i > 3000) throw new Error('the compressor thread did not start within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return c;
  }

  test('the next open of the same capacity gets it back, started, and it compresses as before', async () => {
    const codecs = await loadCodecs();
    const capacity = 48 * KiB + 1;
    const first = await opened(capacity);
    first.start(records(40 * KiB, 1), 1);
    first.finish();
    first.close();
    assert.throws(() => first.start(records(10, 1), 1), { code: 'CLOSED' });
    const second = ThreadedCompressor.open(capacity, 'b.vcap');
    try {
      assert.equal(second, first, 'the same compressor, and so the same thread');
      assert.equal(second.ready, true, 'no start-up to wait for');
      const chunk = records(30 * KiB, 2);
      assert.equal(second.start(chunk, 1), true);
      const { compressed } = second.finish();
      assert.deepEqual(compressed, codecs.zstd!.compress!(chunk, 1));
    } finally {
      second.close();
    }
  });

  test('one is kept per thread: another capacity gets a new one, and the newest closed is the one kept', async () => {
    const a = await opened(40 * KiB + 3);
    a.close();
    const b = ThreadedCompressor.open(40 * KiB + 5);
    assert.notEqual(b, a, 'another capacity');
    b.close();
    const a2 = ThreadedCompressor.open(40 * KiB + 3);
    const b2 = ThreadedCompressor.open(40 * KiB + 5);
    try {
      assert.notEqual(a2, a, 'b, closed last, replaced it (and its thread ended)');
      assert.equal(b2, b);
    } finally {
      a2.close();
      b2.close();
    }
  });

  test('a kept compressor whose thread failed meanwhile is not handed out', async () => {
    const capacity = 40 * KiB + 9;
    const c = await opened(capacity);
    c.close();
    // What compressor-thread.ts does when it fails: the state says FAILED (and the thread ends at its next look).
    failThread((c as unknown as { thread: { options: HelperThreadOptions } }).thread.options.control, 'gone');
    const next = ThreadedCompressor.open(capacity);
    try {
      assert.notEqual(next, c);
      const chunk = records(20 * KiB, 4);
      for (let i = 0; !next.ready; i++) {
        if (i > 3000) throw new Error('the compressor thread did not start within 30 s');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(next.start(chunk, 1), true);
      assert.ok(next.finish().compressed, 'the new one works');
    } finally {
      next.close();
    }
  });

  test('a compressor closed with a chunk in flight is not kept (its thread ends)', async () => {
    const capacity = 40 * KiB + 7;
    const c = await opened(capacity);
    assert.equal(c.start(records(30 * KiB, 3), 1), true);
    c.close();
    const next = ThreadedCompressor.open(capacity);
    try {
      assert.notEqual(next, c);
    } finally {
      next.close();
    }
  });
});

describe('McapWriter with a ThreadedCompressor writes the very same file', () => {
  async function write(
    compressor: boolean | PipelinedCompressor,
    chunkSize: number,
    plan: (w: McapWriter, channels: number[]) => void,
  ): Promise<Uint8Array> {
    const writable = new MemoryWritable();
    // Not waited for: the chunks that come while its thread starts are compressed by the writer, the rest by the
    // thread, and the file must be the same either way.
    const threaded = compressor === true ? new ThreadedCompressor(chunkSize + chunkSize / 4) : compressor || undefined;
    try {
      const w = new McapWriter({
        writable,
        codecs: await loadCodecs(),
        profile: 'p',
        library: 'l',
        chunkSize,
        compression: 'zstd',
        compressionLevel: 1,
        chunkCrc: true,
        timeBase: 1_773_712_800_000_000_000n,
        ...(threaded ? { compressor: threaded } : {}),
      });
      w.start();
      const schema = w.addSchema('S', 'protobuf', patternBytes(10, 1));
      plan(w, [w.addChannel('/a', 'protobuf', schema), w.addChannel('/b', '', 0)]);
      w.end();
    } finally {
      threaded?.close();
    }
    return writable.bytes();
  }

  test('chunks of every kind, and records between them, land where the single-threaded writer puts them', async () => {
    const positions: number[][] = [];
    const plan = (w: McapWriter, [a, b]: number[]) => {
      const seen: number[] = [];
      positions.push(seen);
      let t = 0;
      for (let i = 0; i < 300; i++) {
        // Compressible frames, noise (a chunk that stays uncompressed), one frame bigger than the compressor's room.
        const data =
          i % 50 === 7
            ? noiseBytes(40 * KiB, i)
            : i === 120
              ? records(200 * KiB, i)
              : records(1 + ((i * 7919) % 9000), i);
        w.addMessage(i % 3 === 0 ? b! : a!, i, (t += 1000), data);
        // Records outside chunks while one is in compression: they must follow it in the file.
        if (i % 97 === 0) w.addMetadata(`m${i}`, [['i', String(i)]]);
        if (i === 150) w.writeSchemaNow(w.addSchema('T', 'protobuf', patternBytes(20, 2)));
        if (i % 61 === 0) w.flush();
        seen.push(w.position());
      }
    };
    const plain = await write(false, 64 * KiB, plan);
    const threaded = await write(true, 64 * KiB, plan);
    assert.deepEqual(threaded, plain);
    // Started first, so every chunk it has room for goes to its thread (and their CRCs are computed there).
    const started = await startedCompressor(80 * KiB);
    assert.deepEqual(await write(started, 64 * KiB, plan), plain, 'a started compressor');
    // position() estimates the file size (an open chunk at its uncompressed size): past the magic and header from
    // the first message on, and the same in both writers right after each flush(), when nothing is in compression.
    const flushed = (seen: number[]) => seen.filter((_, i) => i % 61 === 0);
    assert.ok(positions[0]!.length === 300 && positions[0]!.every((p) => p > 8));
    assert.deepEqual(flushed(positions[1]!), flushed(positions[0]!));
    const reader = McapFileReader.open(new MemoryReadable(threaded), { codecs: await loadCodecs() });
    assert.equal(reader.mode, 'indexed');
    const zstdChunks = reader.chunkIndexes.filter((chunk) => chunk.compression === 'zstd').length;
    assert.ok(zstdChunks > 3, `${zstdChunks} zstd chunks`);
    assert.ok(
      reader.chunkIndexes.some((chunk) => chunk.compression === ''),
      'the noise chunks stay raw',
    );
  });

  test('chunks compressed on the writer thread while the compressor is busy queue behind its chunks, in file order', async () => {
    const codec = (await loadCodecs()).zstd!;
    let started = 0;
    // Always busy until waited for: the writer fills its two slots, then compresses the next chunks itself and
    // queues them (at most one beyond the slots), so both kinds interleave in `pending`.
    const jobs: Uint8Array[] = [];
    const busy: PipelinedCompressor = {
      depth: 2,
      start(chunk, level) {
        if (jobs.length >= 2) throw new Error('slots full');
        started++;
        jobs.push(chunk.slice());
        void level;
        return true;
      },
      finish() {
        const chunk = jobs.shift()!;
        return { records: chunk, compressed: codec.compress!(chunk, 1) };
      },
      finished: () => false,
      close() {},
    };
    const plan = (w: McapWriter, [a, b]: number[]) => {
      for (let i = 0; i < 400; i++) {
        const data = i % 50 === 7 ? noiseBytes(40 * KiB, i) : records(1 + ((i * 7919) % 9000), i);
        w.addMessage(i % 3 === 0 ? b! : a!, i, i * 1000, data);
        if (i % 97 === 0) w.addMetadata(`m${i}`, [['i', String(i)]]);
        if (i % 151 === 0) w.flush();
      }
    };
    const plain = await write(false, 64 * KiB, plan);
    const queued = await write(busy, 64 * KiB, plan);
    assert.ok(started > 3, `${started} chunks went to the compressor`);
    assert.deepEqual(queued, plain);
  });

  test('pendingAgeMs and position count the chunk in compression', async () => {
    const writable = new MemoryWritable();
    const threaded = await startedCompressor(80 * KiB);
    try {
      const w = new McapWriter({
        writable,
        codecs: await loadCodecs(),
        profile: 'p',
        library: 'l',
        chunkSize: 64 * KiB,
        compression: 'zstd',
        compressionLevel: 1,
        chunkCrc: false,
        timeBase: 0n,
        compressor: threaded,
      });
      w.start();
      const ch = w.addChannel('/a', '', 0);
      const before = writable.position();
      w.addMessage(ch, 1, 0, records(70 * KiB, 1));
      // The chunk closed and went to the compressor: nothing reached the writable, but it is pending.
      assert.equal(writable.position(), before);
      assert.ok(w.position() > before + 70 * KiB);
      assert.ok(w.pendingAgeMs(Date.now() + 10) >= 10);
      w.flush();
      assert.ok(writable.position() > before, 'flush writes it');
      assert.equal(w.pendingAgeMs(), -1);
      w.end();
    } finally {
      threaded.close();
    }
  });
});

describe('openChunkCompressor: a compressor thread for zstd chunks of 1 MiB or more, syncMode too', () => {
  const context = (writerThread: boolean) => ({ writerThread }) as unknown as RecordingContext;
  const cases: Array<
    [writerThread: boolean, cacheSize: number, compress: 'zstd' | 'none' | 'auto', threaded: boolean]
  > = [
    [true, 4 * MiB, 'zstd', true],
    [true, 4 * MiB, 'auto', true],
    [true, MiB, 'zstd', true],
    [true, 4 * MiB, 'none', false],
    [true, 512 * KiB, 'zstd', false],
    [true, 0, 'zstd', false],
    [false, 4 * MiB, 'zstd', true],
    [false, MiB, 'auto', true],
    [false, 4 * MiB, 'none', false],
    [false, 512 * KiB, 'zstd', false],
  ];
  for (const [writerThread, cacheSize, compress, threaded] of cases) {
    test(`writerThread ${writerThread}, cacheSize ${cacheSize}, compress ${compress} → ${threaded ? 'ThreadedCompressor' : 'none'}`, () => {
      const c = openChunkCompressor(
        cacheSize,
        resolveWriterConfig({ cacheSize, compress }),
        context(writerThread),
        'x.vcap',
      );
      try {
        assert.equal(c instanceof ThreadedCompressor, threaded);
        if (c instanceof ThreadedCompressor)
          assert.equal(c.capacity, cacheSize * 1.25, 'room for one frame past the chunk size');
      } finally {
        c?.close();
      }
    });
  }

  test('the caller thread has one, lent to one file at a time; the writer thread one per file', () => {
    const config = resolveWriterConfig({ cacheSize: MiB, compress: 'zstd' });
    const first = openChunkCompressor(MiB, config, context(false), 'a.vcap');
    const second = openChunkCompressor(MiB, config, context(false), 'b.vcap');
    const own = [
      openChunkCompressor(MiB, config, context(true), 'c.vcap'),
      openChunkCompressor(MiB, config, context(true), 'd.vcap'),
    ];
    try {
      assert.ok(first instanceof ThreadedCompressor);
      assert.equal(second, undefined, 'lent to a.vcap: b.vcap compresses on its own thread');
      assert.ok(own[0] instanceof ThreadedCompressor && own[1] instanceof ThreadedCompressor);
      assert.notEqual(own[0], own[1]);
      assert.notEqual(own[0], first);
      first.close();
      const third = openChunkCompressor(MiB, config, context(false), 'e.vcap');
      assert.equal(third, first, 'back from a.vcap: the next caller-side file gets the same one (its thread kept)');
      third?.close();
    } finally {
      first?.close();
      second?.close();
      for (const c of own) c?.close();
    }
  });
});
