import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { McapWriter as ReferenceWriter } from '@mcap/core';
import { BagError } from '@vlink/bag-core';
import type { MergeLimits } from '@vlink/bag-core/internal';
import { loadCodecs } from '../codecs.js';
import { MemoryReadable } from '../io/memory-readable.js';
import { mcapIndexed, mcapStream } from '../vcap/vcap.test.helper.js';
import { ChunkLoader } from './chunk-loader.js';
import { LogTimeCursor } from './log-time-cursor.js';
import { McapFileReader } from './mcap-reader.js';
import { MessageFilter } from './message-filter.js';

// Messages of a file written out of order, as a multi-threaded recorder writes them: the log-time cursor must give
// what @mcap/core's indexed reader gives (log time, ties by chunk offset then by offset in the chunk), and the
// file-order cursor what its stream reader gives.

interface Written {
  bytes: Uint8Array;
  count: number;
  /** Channel id by topic. */
  ids: Map<string, number>;
}

/** A deterministic generator: the same files on every runtime. */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Three channels whose log times wander: each message is late by up to `jitterMs` against a steady clock, on a 1 ms
 * grid so that ties (same log time, another channel or the same) are common; small chunks so that their time ranges
 * overlap. Written by @mcap/core's writer.
 */
async function outOfOrder(options: {
  count: number;
  jitterMs: number;
  chunkSize: number;
  useChunks?: boolean;
  zstd?: boolean;
}): Promise<Written> {
  const codecs = await loadCodecs();
  const parts: Uint8Array[] = [];
  let position = 0n;
  const writer = new ReferenceWriter({
    writable: {
      position: () => position,
      write: async (buffer: Uint8Array) => {
        parts.push(buffer.slice());
        position += BigInt(buffer.length);
      },
    },
    useChunks: options.useChunks ?? true,
    chunkSize: options.chunkSize,
    ...(options.zstd
      ? {
          compressChunk: (data: Uint8Array) => ({
            compression: 'zstd',
            compressedData: codecs.zstd!.compress!(data, 1),
          }),
        }
      : {}),
  });
  await writer.start({ profile: '', library: 'log-time-cursor.test' });
  const ids = new Map<string, number>();
  for (const topic of ['/a', '/b', '/c'])
    ids.set(topic, await writer.registerChannel({ topic, messageEncoding: 'raw', schemaId: 0, metadata: new Map() }));
  const channels = [...ids.values()];
  const random = lcg(options.count * 31 + options.jitterMs);
  const base = 1_700_000_000_000_000_000n;
  for (let i = 0; i < options.count; i++) {
    const lateMs = Math.floor(random() * options.jitterMs);
    const logTime = base + BigInt(Math.max(0, i - lateMs)) * 1_000_000n;
    const data = new Uint8Array(8 + (i % 13));
    new DataView(data.buffer).setUint32(0, i, true);
    await writer.addMessage({
      channelId: channels[i % 3]!,
      sequence: i,
      logTime,
      publishTime: logTime + BigInt(i),
      data,
    });
  }
  await writer.end();
  const bytes = new Uint8Array(Number(position));
  let at = 0;
  for (const p of parts) {
    bytes.set(p, at);
    at += p.length;
  }
  return { bytes, count: options.count, ids };
}

type Row = [channelId: number, logTime: bigint, publishTime: bigint, sequence: number, data: string];

const hex = (data: Uint8Array) => Buffer.from(data).toString('hex');

async function ours(bytes: Uint8Array, query: Parameters<McapFileReader['messages']>[0]): Promise<Row[]> {
  const reader = McapFileReader.open(new MemoryReadable(bytes, 'mem.mcap'), { codecs: await loadCodecs() });
  try {
    // `data` is valid until the next step: read it at once.
    const rows: Row[] = [];
    for (const m of reader.messages(query)) rows.push([m.channelId, m.logTime, m.publishTime, m.sequence, hex(m.data)]);
    return rows;
  } finally {
    reader.close();
  }
}

async function reference(
  bytes: Uint8Array,
  query: { topics?: string[]; startTime?: bigint; endTime?: bigint } = {},
): Promise<Row[]> {
  const reader = await mcapIndexed(bytes);
  const rows: Row[] = [];
  for await (const m of reader.readMessages(query))
    rows.push([m.channelId, m.logTime, m.publishTime, m.sequence, hex(m.data)]);
  return rows;
}

function isSorted(rows: Row[]): boolean {
  return rows.every((r, i) => i === 0 || rows[i - 1]![1] <= r[1]);
}

describe('log-time order (McapFileReader.cursor with order: log-time)', () => {
  for (const [name, options] of [
    ['uncompressed chunks that overlap in time', { count: 3000, jitterMs: 40, chunkSize: 2048 }],
    ['zstd chunks that overlap in time', { count: 3000, jitterMs: 40, chunkSize: 2048, zstd: true }],
    ['a few very late messages across many chunks', { count: 2000, jitterMs: 400, chunkSize: 512 }],
    ['one chunk written out of order', { count: 500, jitterMs: 25, chunkSize: 1 << 20 }],
  ] as const) {
    test(`${name}: the messages of @mcap/core's indexed reader, in its order`, async () => {
      const file = await outOfOrder(options);
      const want = await reference(file.bytes);
      assert.equal(want.length, file.count);
      assert.ok(!isSorted(await ours(file.bytes, {})), 'the file is written out of order');
      assert.deepEqual(await ours(file.bytes, { order: 'log-time' }), want);
    });
  }

  test('time windows and channel filters as @mcap/core applies them', async () => {
    const { bytes, ids } = await outOfOrder({ count: 3000, jitterMs: 60, chunkSize: 1024 });
    const base = 1_700_000_000_000_000_000n;
    for (const [startMs, endMs] of [
      [0n, 10n],
      [500n, 1500n],
      [2999n, 4000n],
      [1200n, 1200n],
    ]) {
      const startTime = base + startMs * 1_000_000n;
      const endTime = base + endMs * 1_000_000n;
      assert.deepEqual(
        await ours(bytes, { order: 'log-time', startTime, endTime }),
        await reference(bytes, { startTime, endTime }),
        `${startMs}..${endMs} ms`,
      );
      assert.deepEqual(
        await ours(bytes, { order: 'log-time', startTime, endTime, channelIds: [ids.get('/b')!] }),
        await reference(bytes, { startTime, endTime, topics: ['/b'] }),
        `/b in ${startMs}..${endMs} ms`,
      );
    }
  });

  test('file order stays the default: what the stream reader gives', async () => {
    const { bytes } = await outOfOrder({ count: 1000, jitterMs: 40, chunkSize: 2048 });
    const stream = (await mcapStream(bytes)).flatMap((r) =>
      r.type === 'Message' ? [[r.channelId, r.logTime, r.publishTime, r.sequence, hex(r.data)] as Row] : [],
    );
    assert.deepEqual(await ours(bytes, {}), stream);
    assert.deepEqual(await ours(bytes, { order: 'file' }), stream);
  });

  test('a file without chunks is read in file order in either mode (as a streaming reader reads it)', async () => {
    const { bytes } = await outOfOrder({ count: 400, jitterMs: 30, chunkSize: 0, useChunks: false });
    const stream = (await mcapStream(bytes)).flatMap((r) =>
      r.type === 'Message' ? [[r.channelId, r.logTime, r.publishTime, r.sequence, hex(r.data)] as Row] : [],
    );
    assert.deepEqual(await ours(bytes, { order: 'log-time' }), stream);
  });

  test('a damaged chunk: the messages before it, then a typed error', async () => {
    const { bytes } = await outOfOrder({ count: 2000, jitterMs: 5, chunkSize: 4096 });
    const reader = McapFileReader.open(new MemoryReadable(bytes.slice(), 'mem.mcap'), { codecs: await loadCodecs() });
    const chunks = reader.chunkIndexes;
    reader.close();
    assert.ok(chunks.length > 4);
    // A payload byte of the middle chunk: its CRC no longer matches.
    const middle = chunks[Math.floor(chunks.length / 2)]!;
    const damaged = bytes.slice();
    damaged[Number(middle.chunkStartOffset + middle.chunkLength) - 20]! ^= 0xff;
    const read = McapFileReader.open(new MemoryReadable(damaged, 'mem.mcap'), { codecs: await loadCodecs() });
    const got: bigint[] = [];
    assert.throws(
      () => {
        for (const m of read.messages({ order: 'log-time' })) got.push(m.logTime);
      },
      (error: unknown) => BagError.isInstance(error) && error.code === 'CORRUPT_FILE',
    );
    read.close();
    assert.ok(got.length > 0 && got.every((t) => t <= middle.messageStartTime), `${got.length} messages before`);
  });

  test('chunks held open to merge are bounded: past the limits, LIMIT_REACHED instead of the memory of a server', async () => {
    // Late messages 400 ms deep over 512-byte chunks: many chunks overlap; a chunk index that lies (a hostile file)
    // can make every chunk overlap.
    const { bytes } = await outOfOrder({ count: 2000, jitterMs: 400, chunkSize: 512 });
    const codecs = await loadCodecs();
    const readable = new MemoryReadable(bytes, 'mem.mcap');
    const reader = McapFileReader.open(readable, { codecs });
    const cursor = (limits?: MergeLimits) =>
      new LogTimeCursor(
        readable,
        () => new ChunkLoader(readable, codecs, true, 'mem.mcap'),
        reader.blocks,
        new MessageFilter({}),
        'mem.mcap',
        limits,
      );
    let n = 0;
    for (const c = cursor(); c.next(); ) n++;
    assert.equal(n, 2000);
    for (const limits of [
      { maxOpen: 2, maxOpenBytes: 1 << 30 },
      { maxOpen: 1024, maxOpenBytes: 40 * 1024 },
    ]) {
      assert.throws(
        () => {
          for (const c = cursor(limits); c.next(); );
        },
        (error: unknown) => BagError.isInstance(error) && error.code === 'LIMIT_REACHED' && error.file === 'mem.mcap',
        JSON.stringify(limits),
      );
    }
    reader.close();
  });
});
