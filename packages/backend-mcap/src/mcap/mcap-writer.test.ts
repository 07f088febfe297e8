import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { loadCodecs } from '../codecs.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { MemoryWritable } from '../io/memory-writable.js';
import type { Writable } from '../io/writable.js';
import { crc32 } from './crc32.js';
import { McapFileReader } from './mcap-reader.js';
import { McapWriter, type McapWriterOptions } from './mcap-writer.js';
import { MAX_LOG_OFFSET_US } from './message-times.js';
import { mcapStream } from '../vcap/vcap.test.helper.js';

/** A writable with only the required methods: the writer must fall back to copying big payloads. */
class PlainWritable implements Writable {
  private readonly inner = new MemoryWritable();
  position = () => this.inner.position();
  write = (b: Uint8Array) => this.inner.write(b);
  flush() {}
  sync() {}
  close() {}
  bytes = () => this.inner.bytes();
}

/** A started writer: 4 KiB uncompressed chunks with CRCs, a time base in 2026, unless `options` say otherwise. */
async function startWriter(writable: Writable, options: Partial<McapWriterOptions>): Promise<McapWriter> {
  const w = new McapWriter({
    writable,
    codecs: await loadCodecs(),
    profile: 'p',
    library: 'l',
    chunkSize: 4096,
    compression: '',
    compressionLevel: 1,
    chunkCrc: true,
    timeBase: 1_773_712_800_123_000_000n,
    ...options,
  });
  w.start();
  return w;
}

async function build(
  writable: Writable,
  options: Partial<McapWriterOptions>,
  messages: Array<[channel: number, timeNs: number, data: Uint8Array]>,
) {
  const w = await startWriter(writable, options);
  const s = w.addSchema('S', 'protobuf', patternBytes(10, 1));
  const a = w.addChannel('/a', 'protobuf', s);
  const b = w.addChannel('/b', '', 0);
  const seq = [0, 0, 0];
  for (const [ch, t, data] of messages) w.addMessage(ch === 0 ? a : b, ++seq[ch]!, t, data);
  w.end();
  return w;
}

describe('McapWriter', () => {
  test('the DataEnd record carries the CRC of every byte before it, spilled and compressed chunks included', async () => {
    const messages: Array<[number, number, Uint8Array]> = [];
    for (let i = 0; i < 60; i++) messages.push([i % 2, i * 1_000_000, patternBytes(i % 7 === 0 ? 150_000 : 90, i)]);
    const cases: Array<[string, Partial<McapWriterOptions>, () => Writable]> = [
      ['spilled payloads', { directWriteThreshold: 1024 }, () => new MemoryWritable()],
      ['copied payloads', {}, () => new PlainWritable()],
      ['zstd chunks', { compression: 'zstd' }, () => new MemoryWritable()],
      ['no chunks', { chunkSize: 0, directWriteThreshold: 1024 }, () => new MemoryWritable()],
    ];
    for (const [name, options, make] of cases) {
      const writable = make() as Writable & { bytes(): Uint8Array };
      await build(writable, options, messages);
      const bytes = writable.bytes();
      const reader = McapFileReader.open(new MemoryReadable(bytes), { codecs: await loadCodecs() });
      const dataEnd = Number(reader.footer!.summaryStart) - 13;
      assert.equal(bytes[dataEnd], 0x0f, `${name}: DataEnd where the summary says`);
      const stored = new DataView(bytes.buffer, bytes.byteOffset).getUint32(dataEnd + 9, true);
      assert.notEqual(stored, 0, name);
      assert.equal(stored, crc32(bytes.subarray(0, dataEnd)), name);
      // Without checksums the field says "not computed", and chunks carry none either.
      const plain = make() as Writable & { bytes(): Uint8Array };
      await build(plain, { ...options, chunkCrc: false }, messages);
      const p = plain.bytes();
      const end = p.length - 8 - 20 - 9;
      const summaryStart = Number(new DataView(p.buffer, p.byteOffset).getBigUint64(end + 9, true));
      assert.equal(new DataView(p.buffer, p.byteOffset).getUint32(summaryStart - 4, true), 0, `${name}: no CRC`);
    }
  });

  test('big payloads written around the chunk buffer give the same bytes as copying them', async () => {
    const messages: Array<[number, number, Uint8Array]> = [];
    for (let i = 0; i < 40; i++)
      messages.push([
        i % 2,
        i * 1_000_000 + (i % 3 === 0 ? 4_294_967_296 : 0),
        patternBytes(i % 5 === 0 ? 200_000 : 100, i),
      ]);
    messages.sort((x, y) => x[1] - y[1]);
    const direct = new MemoryWritable();
    const copied = new PlainWritable();
    await build(direct, { directWriteThreshold: 1024 }, messages);
    await build(copied, {}, messages);
    assert.deepEqual(direct.bytes(), copied.bytes());
    const reader = McapFileReader.open(new MemoryReadable(direct.bytes()), { codecs: await loadCodecs() });
    assert.equal(reader.mode, 'indexed');
    const got = [...reader.messages()].map((m) => [m.channelId, m.logTime, m.data.length]);
    assert.deepEqual(
      got,
      messages.map(([c, t, d]) => [c + 1, 1_773_712_800_123_000_000n + BigInt(t), d.length]),
    );
  });

  test('log and publish times are exact for every time base, offsets across 2^31 ns and to the last exact one', async () => {
    // The writer biases offsets by 2^32 inside (mcap-writer.ts): bases below and at 2^32 and the largest offsets are
    // where a slip would show. Read back by @mcap/core, chunked and not, with and without compression.
    const lastNs = MAX_LOG_OFFSET_US * 1000;
    const offsets = [0, 8000, 2 ** 31 - 1000, 2 ** 31 + 1000, 2 ** 32 - 1000, 2 ** 32, 2 ** 32 + 1000, 1e15, lastNs];
    const bases = [0n, 1_000n, 2n ** 32n - 1_000_000n, 2n ** 32n, 1_773_712_800_123_000_000n];
    for (const timeBase of bases) {
      for (const options of [{}, { chunkSize: 0 }, { compression: 'zstd' }] as Array<Partial<McapWriterOptions>>) {
        const writable = new MemoryWritable();
        const w = await startWriter(writable, { timeBase, ...options });
        const c = w.addChannel('/t', '', 0);
        const expected: Array<[bigint, bigint]> = [];
        offsets.forEach((ns, i) => {
          // Publish: the log time, an offset before it (before the base too where the base allows), or a bigint.
          const publish = i % 3 === 0 ? undefined : i % 3 === 1 ? -Math.min(Number(timeBase), 5e8) : 7n;
          w.addMessage(c, i + 1, ns, patternBytes(8, i), publish);
          const log = timeBase + BigInt(ns);
          expected.push([
            log,
            publish === undefined ? log : typeof publish === 'bigint' ? publish : timeBase + BigInt(publish),
          ]);
        });
        w.end();
        const records = await mcapStream(writable.bytes());
        const messages = records.filter((r) => r.type === 'Message');
        const label = `base ${timeBase}, ${JSON.stringify(options)}`;
        assert.deepEqual(
          messages.map((m) => [m.logTime, m.publishTime]),
          expected,
          label,
        );
        const statistics = records.find((r) => r.type === 'Statistics');
        assert.equal(statistics?.messageStartTime, timeBase, label);
        assert.equal(statistics?.messageEndTime, timeBase + BigInt(lastNs), label);
        for (const index of records.filter((r) => r.type === 'ChunkIndex')) {
          assert.ok(index.messageStartTime >= timeBase && index.messageEndTime <= timeBase + BigInt(lastNs), label);
        }
        const reader = McapFileReader.open(new MemoryReadable(writable.bytes()), { codecs: await loadCodecs() });
        assert.deepEqual(
          [...reader.messages()].map((m) => m.logTime),
          expected.map(([log]) => log),
          label,
        );
      }
    }
  });

  test('chunks close at chunkSize; flush() empties the open chunk; pendingAgeMs tracks it', async () => {
    const writable = new MemoryWritable();
    const w = new McapWriter({
      writable,
      codecs: await loadCodecs(),
      profile: 'p',
      library: 'l',
      chunkSize: 1000,
      compression: '',
      compressionLevel: 1,
      chunkCrc: false,
      timeBase: 0n,
    });
    w.start();
    const c = w.addChannel('/c', '', 0);
    assert.equal(w.pendingAgeMs(), -1);
    w.addMessage(c, 1, 5, patternBytes(100, 1));
    assert.ok(w.pendingAgeMs(Date.now() + 10) >= 10);
    const before = writable.position();
    w.flush();
    assert.ok(writable.position() > before);
    assert.equal(w.pendingAgeMs(), -1);
    for (let i = 0; i < 30; i++) w.addMessage(c, i + 2, i, patternBytes(100, i));
    assert.equal(w.stats().chunkCount, 1 + Math.floor((30 * 131) / 1000));
    w.end();
    w.end();
    assert.throws(
      () => w.addMessage(c, 99, 0, new Uint8Array(1)),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
    );
  });

  test('lz4 chunks cannot be written (VLink never writes them)', async () => {
    assert.throws(
      () =>
        new McapWriter({
          writable: new MemoryWritable(),
          codecs: { lz4: { decompress: (d) => d } },
          profile: '',
          library: '',
          chunkSize: 10,
          compression: 'lz4',
          compressionLevel: 1,
          chunkCrc: false,
          timeBase: 0n,
        }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED',
    );
  });
});
