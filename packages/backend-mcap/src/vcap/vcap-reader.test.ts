import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, formatVlinkDate, SchemaType } from '@vlink/bag-core';
import type { Frame, WriterConfig } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { loadCodecs } from '../codecs.js';
import { MemoryWritable } from '../io/memory-writable.js';
import { McapWriter } from '../mcap/mcap-writer.js';
import { mixedFrames, openBytes, readFrames, recordToBytes, testContext } from './vcap.test.helper.js';

const START = 1_773_712_800_123;

const pick = (f: Frame) => [f.timestamp, f.url, f.actionType, f.data.length];

describe('vcap round trips', () => {
  const configs: Array<[string, Partial<WriterConfig>]> = [
    ['defaults', {}],
    ['zstd + CRC', { compress: 'zstd', enableChunkCrc: true }],
    ['auto, tiny chunks', { compress: 'auto', cacheSize: 256 }],
    ['tiny chunks + CRC', { cacheSize: 128, enableChunkCrc: true }],
    ['no chunking', { cacheSize: -1 }],
    ['big payloads + CRC', { cacheSize: 256 * 1024, enableChunkCrc: true }],
  ];
  for (const [name, config] of configs) {
    test(name, async () => {
      const frames = mixedFrames(120, name.startsWith('big') ? 5 : 0);
      const reader = await openBytes(await recordToBytes(frames, config));
      const got = readFrames(reader);
      assert.equal(got.length, frames.length);
      for (let i = 0; i < frames.length; i++) {
        const want = frames[i]!;
        const f = got[i]!;
        assert.deepEqual([f.timestamp, f.url, f.actionType], [want.timestamp, want.url, want.actionType], `frame ${i}`);
        assert.deepEqual(f.data, want.data, `data ${i}`);
      }
      assert.equal(reader.info().hasCompleted, true);
      assert.equal(reader.mcap.mode, 'indexed');
      assert.equal(await reader.check(), true);
      reader.close();
    });
  }

  test('unchunked files larger than the read window, records straddling its edge', async () => {
    const frames = Array.from(
      { length: 2500 },
      (_, i): Frame => ({
        timestamp: i * 10,
        url: `u${i % 3}`,
        data: patternBytes(1500 + (i % 977), i),
        serType: '',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.Publish,
      }),
    );
    frames.splice(1200, 0, {
      timestamp: 11_995,
      url: 'big',
      data: patternBytes(5 * 1024 * 1024, 1),
      serType: '',
      schemaType: SchemaType.Unknown,
      actionType: ActionType.Publish,
    });
    const reader = await openBytes(await recordToBytes(frames, { cacheSize: 0 }));
    const got = readFrames(reader);
    assert.equal(got.length, frames.length);
    got.forEach((f, i) => {
      assert.deepEqual(f.data, frames[i]!.data, `frame ${i}`);
    });
    assert.deepEqual(
      readFrames(reader, { urls: ['big'] }).map((f) => f.data.length),
      [5 * 1024 * 1024],
    );
    reader.close();
  });

  test('two iterations interleaved keep their own buffers', async () => {
    const frames = mixedFrames(400);
    const reader = await openBytes(await recordToBytes(frames, { cacheSize: 2048, compress: 'zstd' }));
    const a = reader.frames({});
    const b = reader.frames({ urls: ['dds://imu'] });
    const imu = frames.filter((f) => f.url === 'dds://imu');
    let i = 0;
    let j = 0;
    for (;;) {
      const x = a.next();
      const y = b.next();
      if (x.done && y.done) break;
      if (!x.done) assert.deepEqual(x.value.data, frames[i++]!.data);
      if (!y.done) assert.deepEqual(y.value.data, imu[j++]!.data);
    }
    assert.deepEqual([i, j], [frames.length, imu.length]);
    reader.close();
  });

  test('frames carry the url-level ser and family; RPC urls keep the whole "Req|Resp"', async () => {
    const reader = await openBytes(await recordToBytes(mixedFrames(36)));
    const seen = new Map<string, [string, SchemaType]>();
    for (const f of reader.frames({})) seen.set(`${f.url} ${f.actionType}`, [f.serType, f.schemaType]);
    reader.close();
    assert.deepEqual(seen.get(`dds://camera ${ActionType.Publish}`), ['pb.Image', SchemaType.Protobuf]);
    assert.deepEqual(seen.get(`dds://pose ${ActionType.Subscribe}`), ['fb.Pose', SchemaType.Flatbuffers]);
    assert.deepEqual(seen.get(`dds://svc ${ActionType.ClientRequest}`), ['pb.Req|pb.Resp', SchemaType.Protobuf]);
    assert.deepEqual(seen.get(`dds://svc ${ActionType.ClientResponse}`), ['pb.Req|pb.Resp', SchemaType.Protobuf]);
    assert.deepEqual(seen.get(`dds://blob ${ActionType.Publish}`), ['', SchemaType.Unknown]);
  });

  test('info follows format reference §5.4', async () => {
    const frames = mixedFrames(60);
    const context = testContext({ startTimestamp: START, processName: 'proc', tagName: '', timezone: -300 });
    const bytes = await recordToBytes(frames, { compress: 'zstd' }, context, (w) => w.setUrlLoss('dds://camera', 0.5));
    const reader = await openBytes(bytes, false, 'x.vcap');
    const info = reader.info();
    reader.close();
    assert.equal(info.path, 'x.vcap');
    assert.equal(info.format, 'vcap');
    assert.equal(info.storageType, 'vcap');
    assert.equal(info.version, '2.1.0');
    assert.equal(info.compressionType, 'zstd');
    assert.equal(info.processName, 'proc');
    assert.equal(info.dateTime, formatVlinkDate(START));
    assert.equal(info.tagName, 'Empty');
    assert.equal(info.timezone, -300);
    assert.equal(info.startTimestamp, START);
    assert.equal(info.timeAccuracy, 'MicroSecond');
    assert.equal(info.messageCount, frames.length);
    assert.equal(info.blankDuration, Math.floor(frames[0]!.timestamp / 1000));
    assert.equal(info.totalDuration, Math.floor(frames.at(-1)!.timestamp / 1000));
    assert.equal(info.hasSchema, true);
    assert.equal(info.hasCompleted, true);
    assert.equal(info.fileSize, bytes.length);
    assert.equal(
      info.totalRawSize,
      frames.reduce((s, f) => s + f.data.length, 0),
    );
    assert.deepEqual(
      info.urls.map((u) => u.index),
      info.urls.map((_, i) => i),
    );
    const camera = info.urls.find((u) => u.url === 'dds://camera')!;
    assert.deepEqual(
      { ...camera, freq: Math.round(camera.freq * 1000) / 1000 },
      {
        index: 0,
        url: 'dds://camera',
        type: 'Event',
        action: 'Pub',
        ser: 'pb.Image',
        schemaType: SchemaType.Protobuf,
        count: 10,
        size: 2000,
        loss: 0.5,
        freq: Math.round((10 / 0.054) * 1000) / 1000,
      },
    );
    const svc = info.urls.filter((u) => u.url === 'dds://svc');
    assert.deepEqual(
      svc.map((u) => [u.type, u.action, u.freq]),
      [
        ['Method', 'C/Req', 0],
        ['Method', 'C/Resp', 0],
      ],
    );
  });

  test('time windows are inclusive on µs timestamps; url filters use stored urls', async () => {
    const frames = mixedFrames(200);
    const reader = await openBytes(await recordToBytes(frames, { cacheSize: 512 }));
    const q = (query: object) => readFrames(reader, query).map(pick);
    const want = (pred: (f: Frame) => boolean) => frames.filter(pred).map(pick);
    assert.deepEqual(
      q({ beginUs: 10_500, endUs: 20_500 }),
      want((f) => f.timestamp >= 10_500 && f.timestamp <= 20_500),
    );
    assert.deepEqual(
      q({ beginUs: 10_501, endUs: 20_499 }),
      want((f) => f.timestamp >= 10_501 && f.timestamp <= 20_499),
    );
    assert.deepEqual(
      q({ endUs: 3_500 }),
      want((f) => f.timestamp <= 3_500),
    );
    assert.deepEqual(
      q({ beginUs: 150_000 }),
      want((f) => f.timestamp >= 150_000),
    );
    assert.deepEqual(
      q({ urls: ['dds://imu', 'dds://svc'], beginUs: 40_000, endUs: 90_000 }),
      want((f) => ['dds://imu', 'dds://svc'].includes(f.url) && f.timestamp >= 40_000 && f.timestamp <= 90_000),
    );
    assert.deepEqual(q({ beginUs: 1e9 }), []);
    assert.deepEqual(q({ beginUs: 5000, endUs: 4000 }), []);
    assert.deepEqual(q({ urls: [] }), []);
    assert.deepEqual(q({ urls: ['nope'] }), []);
    reader.close();
  });

  test('an empty recording opens with its start time', async () => {
    const reader = await openBytes(await recordToBytes([], {}, testContext({ startTimestamp: START })));
    const info = reader.info();
    assert.equal(info.messageCount, 0);
    assert.equal(info.startTimestamp, START);
    assert.equal(info.blankDuration, 0);
    assert.equal(info.totalDuration, 0);
    assert.deepEqual(info.urls, []);
    assert.equal(info.hasCompleted, true);
    assert.deepEqual(readFrames(reader), []);
    reader.close();
  });

  test('timestamps across 2^32 ns and days into a recording stay exact', async () => {
    const ts = [0, 1, 4_294_967, 4_294_968, 4_294_967_296, 86_400_000_000 * 3 + 7, 2 ** 40 + 123];
    const frames = ts.map(
      (timestamp, i): Frame => ({
        timestamp,
        url: 'u',
        data: patternBytes(4, i),
        serType: '',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.Publish,
      }),
    );
    const reader = await openBytes(
      await recordToBytes(frames, { cacheSize: 64 }, testContext({ startTimestamp: 4_102_444_800_999 })),
    );
    assert.deepEqual(
      readFrames(reader).map((f) => f.timestamp),
      ts,
    );
    assert.deepEqual(
      readFrames(reader, { beginUs: 4_294_967_296, endUs: 4_294_967_296 }).map((f) => f.timestamp),
      [4_294_967_296],
    );
    reader.close();
  });
});

describe('vcap metadata recovery edge cases (format reference §5.4)', () => {
  async function vlinkFile(
    header: Array<[string, string]>,
    messagesMs: number[],
    extra?: (w: McapWriter) => void,
  ): Promise<Uint8Array> {
    const writable = new MemoryWritable();
    const w = new McapWriter({
      writable,
      codecs: await loadCodecs(),
      profile: 'vlink',
      library: 'test',
      chunkSize: 1024,
      compression: '',
      compressionLevel: 0,
      chunkCrc: false,
      timeBase: 0n,
    });
    w.start();
    w.addMetadata('VLinkHeader', header);
    const ch = w.addChannel('dds://x', 'raw', 0, new Map([['action', 'Sub']]));
    messagesMs.forEach((ms, i) => {
      w.addMessage(ch, i + 1, ms * 1_000_000 + 250_000, patternBytes(4, i));
    });
    extra?.(w);
    w.end();
    return writable.bytes();
  }
  const full = (start: string, version = '2.1.0'): Array<[string, string]> => [
    ['tag', 't'],
    ['version', version],
    ['compress', 'None'],
    ['process', 'p'],
    ['date', '2026/03/17 10:00:00:123'],
    ['timezone', '480'],
    ['start_timestamp', start],
  ];

  test('a start after the first message is lowered to it; blank becomes 0', async () => {
    const reader = await openBytes(await vlinkFile(full('5000'), [4000, 4500, 7000]));
    const info = reader.info();
    assert.equal(info.startTimestamp, 4000);
    assert.equal(info.blankDuration, 0);
    assert.equal(info.totalDuration, 3000);
    assert.deepEqual(
      readFrames(reader).map((f) => f.timestamp),
      [250, 500_250, 3_000_250],
    );
    // No VLinkChannel_* records: the fallback metas (step 7), and the file counts as incomplete.
    assert.deepEqual(
      info.urls.map((u) => [u.index, u.url, u.type, u.action, u.count]),
      [[0, 'dds://x', 'Event', 'Sub', 3]],
    );
    assert.equal(info.hasCompleted, false);
    assert.equal(readFrames(reader)[0]!.actionType, ActionType.Subscribe);
    reader.close();
  });

  test('a start before the first message gives a blank duration', async () => {
    const reader = await openBytes(await vlinkFile(full('1000'), [4000, 4500]));
    assert.deepEqual(
      [reader.info().startTimestamp, reader.info().blankDuration, reader.info().totalDuration],
      [1000, 3000, 3500],
    );
    reader.close();
  });

  test('an unparsable start_timestamp falls back to the date; missing keys mark the file incomplete', async () => {
    const header = full('garbage').filter(([k]) => k !== 'process');
    const reader = await openBytes(await vlinkFile(header, []));
    const info = reader.info();
    assert.equal(info.startTimestamp, new Date(2026, 2, 17, 10, 0, 0, 123).getTime());
    assert.equal(info.processName, 'Unknown');
    assert.equal(info.hasCompleted, false);
    reader.close();
  });

  test('another major version is refused', async () => {
    await assert.rejects(
      openBytes(await vlinkFile(full('0', '3.0.0'), [1])),
      (e: unknown) => BagError.isInstance(e) && e.code === 'VERSION_MISMATCH',
    );
  });

  test('a VLinkChannel_N whose index is not N−1 is ignored', async () => {
    const bytes = await vlinkFile(full('0'), [1, 2], (w) =>
      w.addMetadata('VLinkChannel_1', [
        ['index', '5'],
        ['ser', 'wrong'],
      ]),
    );
    const reader = await openBytes(bytes);
    assert.deepEqual(
      reader.info().urls.map((u) => [u.index, u.ser]),
      [[0, '']],
    );
    assert.equal(reader.info().hasCompleted, false);
    reader.close();
  });
});
