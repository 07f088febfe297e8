import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, resolveWriterConfig, SchemaType, type Frame, type WriterConfig } from '@vlink/bag-core';
import { compressFrame } from '@vlink/bag-core/internal';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { noise, pattern, tempDir, withDb } from '../testing/util.js';
import { VdbFileWriter } from './file-writer.js';
import { VdbReader } from './reader.js';
import { VdbRecording } from './recording.js';

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('reader');
after(() => tmp.cleanup());

const FRAME_MAGIC = [0x17, 0x49, 0xb2, 0x6f];

function frame(timestamp: number, url: string, data: Uint8Array, more: Partial<Frame> = {}): Frame {
  return { timestamp, url, data, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish, ...more };
}

async function record(frames: Frame[], config: Partial<WriterConfig> = {}): Promise<string> {
  const path = tmp.path('r.vdb');
  const writer = await backend.createWriter(path, resolveWriterConfig(config), createTestContext());
  for (const f of frames) writeFrame(writer, f);
  writer.close();
  return path;
}

function readAll(reader: VdbReader, query = {}): Frame[] {
  return [...reader.frames(query)].map((f) => ({ ...f, data: f.data.slice() }));
}

function query(path: string, sql: string): SqlRow[] {
  return withDb(driver, path, (db) => db.prepare(sql).all(), true);
}

function isFramed(value: unknown): boolean {
  return value instanceof Uint8Array && FRAME_MAGIC.every((b, i) => value[i] === b);
}

describe('VdbReader: info and frames', () => {
  test('info follows the header and the urls; metas sorted by url then index', async () => {
    const path = await record([
      frame(2_000_000, 'dds://z', pattern(10)),
      frame(1_000_000, 'dds://a', pattern(20), { serType: 'pb.X', schemaType: SchemaType.Protobuf }),
      frame(3_000_000, 'dds://m', pattern(30), {
        actionType: ActionType.ClientRequest,
        serType: 'a|b',
        schemaType: SchemaType.Unknown,
      }),
    ]);
    const reader = VdbReader.open(driver, path);
    const info = reader.info();
    assert.equal(info.format, 'vdb');
    assert.equal(info.version, '2.1.0');
    assert.equal(info.storageType, 'SQLite3');
    assert.equal(info.messageCount, 3);
    assert.equal(info.blankDuration, 1000); // first by elapsed
    assert.equal(info.totalDuration, 3000);
    assert.equal(info.compressionType, 'None');
    assert.equal(info.hasCompleted, true);
    assert.equal(info.totalRawSize, 60);
    assert.equal(info.splitCount, 1);
    assert.deepEqual(
      info.urls.map((m) => [m.url, m.index, m.type, m.ser, m.schemaType]),
      [
        ['dds://a', 1, 'Event', 'pb.X', SchemaType.Protobuf],
        ['dds://m', 2, 'Method', 'a|b', SchemaType.Unknown],
        ['dds://z', 0, 'Event', 'raw', SchemaType.Raw],
      ],
    );
    assert.deepEqual(
      readAll(reader).map((f) => [f.timestamp, f.url, f.serType, f.actionType]),
      [
        [1_000_000, 'dds://a', 'pb.X', ActionType.Publish],
        [2_000_000, 'dds://z', 'raw', ActionType.Publish],
        [3_000_000, 'dds://m', 'a|b', ActionType.ClientRequest],
      ],
    );
    reader.close();
    reader.close();
    assert.throws(
      () => reader.info(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
    );
  });

  test('cursor: url filter, inclusive bounds, elapsed then rowid order, unknown and empty filters', async () => {
    const frames: Frame[] = [];
    for (let i = 0; i < 30; i++)
      frames.push(frame((i % 10) * 1000, i % 3 === 0 ? 'dds://a' : 'dds://b', pattern(5, i)));
    const path = await record(frames);
    const reader = VdbReader.open(driver, path);
    const want = (pred: (f: Frame, i: number) => boolean) =>
      frames
        .map((f, i) => ({ f, i }))
        .filter(({ f, i }) => pred(f, i))
        .sort((x, y) => x.f.timestamp - y.f.timestamp || x.i - y.i)
        .map(({ f }) => [f.timestamp, f.url, [...f.data]]);
    const got = (q: object) => readAll(reader, q).map((f) => [f.timestamp, f.url, [...f.data]]);
    assert.deepEqual(
      got({}),
      want(() => true),
    );
    assert.deepEqual(
      got({ urls: ['dds://a'] }),
      want((f) => f.url === 'dds://a'),
    );
    assert.deepEqual(
      got({ beginUs: 3000, endUs: 5000 }),
      want((f) => f.timestamp >= 3000 && f.timestamp <= 5000),
    );
    assert.deepEqual(
      got({ urls: ['dds://b', 'dds://nope'], beginUs: 8000 }),
      want((f) => f.url === 'dds://b' && f.timestamp >= 8000),
    );
    assert.deepEqual(got({ urls: [] }), []);
    assert.deepEqual(got({ urls: ['dds://nope'] }), []);
    reader.close();
  });

  test('an abandoned cursor releases the connection; cursors can be reopened', async () => {
    const path = await record(Array.from({ length: 20 }, (_, i) => frame(i, 'dds://a', pattern(4, i))));
    const reader = VdbReader.open(driver, path);
    for (const f of reader.frames({})) if (f.timestamp === 3) break;
    assert.equal(readAll(reader).length, 20);
    assert.equal(reader.schemas().length, 0);
    const open = reader.frames({});
    assert.equal(open.next().done, false);
    reader.close(); // ends the open cursor first
    assert.deepEqual(open.next(), { done: true, value: undefined });
  });

  test('a header tag of NULL reads as "Empty"; a negative start_timestamp reads as 0 and incomplete', async () => {
    const path = await record([frame(1, 'dds://a', pattern(4))]);
    withDb(driver, path, (db) => db.exec('UPDATE VLinkHeader SET tag = NULL, start_timestamp = -5;'));
    const reader = VdbReader.open(driver, path);
    assert.equal(reader.info().tagName, 'Empty');
    assert.equal(reader.info().startTimestamp, 0);
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(await reader.check(), false);
    reader.close();
  });
});

describe('VdbReader/VdbFileWriter: LZAV compression', () => {
  test('compressible payloads ≥ compressStartSize are framed; small and incompressible ones stay raw', async () => {
    const path = await record(
      [
        frame(1, 'dds://a', pattern(4000)),
        frame(2, 'dds://a', pattern(100)),
        frame(3, 'dds://b', noise(4000)),
        frame(4, 'dds://c', pattern(200 * 1024)),
      ],
      { compress: 'lzav' },
    );
    const rows = query(path, 'SELECT data FROM VLinkDatas ORDER BY rowid');
    assert.deepEqual(
      rows.map((r) => isFramed(r['data'])),
      [true, false, false, true],
    );
    assert.equal(query(path, 'SELECT compress FROM VLinkHeader')[0]!['compress'], 'lzav');
    assert.deepEqual(
      query(path, 'SELECT url, size FROM VLinkUrls ORDER BY id').map((r) => [r['url'], r['size']]),
      [
        ['dds://a', 4100],
        ['dds://b', 4000],
        ['dds://c', 200 * 1024],
      ],
    );
    const reader = VdbReader.open(driver, path);
    const frames = readAll(reader);
    assert.deepEqual(frames[0]!.data, pattern(4000));
    assert.deepEqual(frames[2]!.data, noise(4000));
    assert.deepEqual(frames[3]!.data, pattern(200 * 1024));
    assert.equal(reader.info().totalRawSize, 4100 + 4000 + 200 * 1024);
    reader.close();
  });

  test('ignoreCompressUrls and the 5-failure rule keep payloads raw; a pre-framed payload counts its original size', async () => {
    const preframed = compressFrame(pattern(1000), 3)!;
    const frames = [frame(1, 'dds://skip', pattern(4000)), frame(2, 'dds://skip', preframed)];
    for (let i = 0; i < 5; i++) frames.push(frame(10 + i, 'dds://noisy', noise(1000, i + 1)));
    frames.push(frame(20, 'dds://noisy', pattern(4000)));
    const path = await record(frames, { compress: 'auto', ignoreCompressUrls: ['dds://skip'] });
    const rows = query(path, 'SELECT data FROM VLinkDatas ORDER BY rowid');
    assert.deepEqual(
      rows.map((r) => isFramed(r['data'])),
      [false, true, false, false, false, false, false, false],
    );
    const sizes = query(path, 'SELECT url, size FROM VLinkUrls ORDER BY id').map((r) => [r['url'], r['size']]);
    assert.deepEqual(sizes[0], ['dds://skip', 4000 + 1000]);
    const reader = VdbReader.open(driver, path);
    // VLink quirk (§3.2): the caller's own frame is decompressed on read because the header says lzav.
    assert.deepEqual(readAll(reader)[1]!.data, pattern(1000));
    reader.close();
  });

  test('eviction subtracts a compressed row’s original size', () => {
    const config = resolveWriterConfig({ compress: 'lzav', maxRowCount: 2, enableLimit: true });
    const recording = new VdbRecording(config);
    const path = tmp.path('evict-z.vdb');
    const writer = VdbFileWriter.open(driver, path, config, createTestContext(), recording);
    for (let i = 0; i < 5; i++) writeFrame(writer, frame(i, 'dds://a', pattern(1000 * (i + 1))));
    assert.equal(writer.rows, 3);
    assert.equal(writer.bytes, 3000 + 4000 + 5000);
    assert.equal(recording.urls.get('dds://a')!.size, 12000);
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT count, size FROM VLinkUrls').map((r) => [r['count'], r['size']]),
      [[3, 12000]],
    );
  });

  test('a rollback restores the compression failure counters', () => {
    const config = resolveWriterConfig({ compress: 'lzav', cacheSize: 1 << 20 });
    const recording = new VdbRecording(config);
    const writer = VdbFileWriter.open(driver, tmp.path('z.vdb'), config, createTestContext(), recording);
    const snap = recording.snapshot();
    for (let i = 0; i < 3; i++) writeFrame(writer, frame(i, 'dds://n', noise(500, i + 1)));
    assert.equal(recording.decider!.failureCount('dds://n'), 3);
    recording.restore(snap);
    assert.equal(recording.decider!.failureCount('dds://n'), 0);
    writer.close();
  });
});
