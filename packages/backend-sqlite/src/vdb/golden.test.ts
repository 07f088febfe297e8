import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, SchemaType } from '@vlink/bag-core';
import { fixturesDir } from '@vlink/fixtures';
import { loadDriver, type SqlValue } from '../driver/driver.js';
import { tempDir, withDb } from '../testing/util.js';
import { VdbReader } from './reader.js';

/**
 * Golden files: `.vdb` files built by hand with plain SQL from the DDL of the format reference (§2.2) (not with our writer), as VLink would
 * have written them, then read back through our reader.
 */
const driver = await loadDriver();
const tmp = tempDir('golden');
after(() => tmp.cleanup());

const lzavDir = join(fixturesDir, 'lzav');
const fixture = (name: string) => new Uint8Array(readFileSync(join(lzavDir, name)));

/** VLink's compression frame around a reference LZAV stream: magic | u32 BE size | stream | magic (format reference §3.1). */
function vlinkFrame(stream: Uint8Array, rawSize: number): Uint8Array {
  const out = new Uint8Array(stream.length + 12);
  out.set([0x17, 0x49, 0xb2, 0x6f], 0);
  new DataView(out.buffer).setUint32(4, rawSize, false);
  out.set(stream, 8);
  out.set([0xa7, 0x05, 0xed, 0x71], out.length - 4);
  return out;
}

const pcRaw = fixture('pointcloud-64k.raw');
const pcFrame = vlinkFrame(fixture('pointcloud-64k.lzav'), pcRaw.length);
const textRaw = fixture('text-short.raw');
const textFrame = vlinkFrame(fixture('text-short.lzavhi'), textRaw.length);
const memsetRaw = fixture('memset-256.raw');
const memsetFrame = vlinkFrame(fixture('memset-256.lzav'), memsetRaw.length);
const REQ = new TextEncoder().encode('request');
const RESP = new TextEncoder().encode('response');
const PLAIN = new TextEncoder().encode('{"plain":true}');

interface Variant {
  compress?: string;
  complete?: number;
  duration?: number;
  index?: 'idx_elapsed_url' | 'idx_elapsed' | 'none';
  major?: number;
}

/** rowid order; elapsed deliberately out of order, and one row of an id missing from VLinkUrls. */
const ROWS: [elapsed: number, url: number, action: string, data: Uint8Array][] = [
  [2_000_000, 0, 'Pub', pcFrame],
  [500_000, 7, 'C/Req', REQ],
  [500_000, 7, 'C/Resp', RESP],
  [3_000_000, 2, 'Pub', textFrame],
  [1_000_000, 2, 'Pub', PLAIN],
  [1_500_000, 99, 'Pub', PLAIN],
  [2_500_000, 0, 'Bogus', memsetFrame],
];

function build(v: Variant = {}): string {
  const path = tmp.path('golden.vdb');
  withDb(driver, path, (db) => {
    db.exec('PRAGMA page_size = 16384; PRAGMA journal_mode = OFF;');
    db.exec('BEGIN;');
    db.exec(
      'CREATE TABLE IF NOT EXISTS VLinkHeader(major INTEGER, minor INTEGER, patch INTEGER, count INTEGER, duration INTEGER, accuracy TEXT, compress TEXT, process TEXT, date TEXT, tag TEXT, complete INTEGER, timezone INTEGER, start_timestamp INTEGER);',
    );
    db.prepare(
      'INSERT INTO VLinkHeader (major, minor, patch, count, duration, accuracy, compress, process, date, tag, complete, timezone, start_timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);',
    ).run(
      v.major ?? 2,
      0,
      3,
      7,
      v.duration ?? 3_000_000,
      'MicroSecond',
      v.compress ?? 'lzav',
      'recorder',
      '2026/03/17 10:00:00:123',
      'drive-42',
      v.complete ?? 1,
      480,
      1_773_712_800_123,
    );
    db.exec('CREATE TABLE IF NOT EXISTS VLinkSchemas(ser TEXT, encoding TEXT, data BLOB);');
    db.exec(
      'CREATE TABLE IF NOT EXISTS VLinkUrls(id INTEGER, url TEXT, type TEXT, ser TEXT, encoding TEXT, count INTEGER, loss REAL, size INTEGER, freq REAL);',
    );
    db.exec('CREATE TABLE IF NOT EXISTS VLinkDatas(elapsed INTEGER, url INTEGER, action TEXT, data BLOB);');
    const schema = db.prepare('INSERT INTO VLinkSchemas(ser, encoding, data) VALUES (?, ?, ?);');
    schema.run('pb.Req', 'protobuf', new Uint8Array([1, 2, 3]));
    schema.run('pb.Resp', 'proto', new Uint8Array([4, 5]));
    const url = db.prepare(
      'INSERT INTO VLinkUrls (id, url, type, ser, encoding, count, loss, size, freq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);',
    );
    const urls: SqlValue[][] = [
      [0, 'shm://lidar', 'Event', 'raw', 'raw', 2, 0, pcRaw.length + memsetRaw.length, 4],
      [7, 'dds://planner', 'Method', 'pb.Req|pb.Resp', 'protobuf', 2, -1, REQ.length + RESP.length, 0],
      [2, 'dds://text', 'Event', 'json', '', 2, 0.5, textRaw.length + PLAIN.length, 0.5],
    ];
    for (const u of urls) url.run(...u);
    const data = db.prepare('INSERT INTO VLinkDatas (elapsed, url, action, data) VALUES (?, ?, ?, ?);');
    for (const r of ROWS) data.run(...r);
    const index = v.index ?? 'idx_elapsed_url';
    if (index === 'idx_elapsed_url') db.exec('CREATE INDEX IF NOT EXISTS idx_elapsed_url ON VLinkDatas(elapsed, url);');
    if (index === 'idx_elapsed')
      db.exec('CREATE INDEX idx_elapsed ON VLinkDatas(elapsed); CREATE INDEX idx_url ON VLinkDatas(url);');
    db.exec('COMMIT;');
  });
  return path;
}

const PC = ['shm://lidar', ActionType.Publish, 'raw', SchemaType.Raw];

describe('golden .vdb built by hand from the DDL of the format reference', () => {
  test('info: header, urls (sparse ids, encoding-less ser inference), schemas, durations', () => {
    const reader = VdbReader.open(driver, build());
    const info = reader.info();
    assert.equal(info.version, '2.0.3');
    assert.equal(info.messageCount, 7);
    assert.equal(info.compressionType, 'lzav');
    assert.equal(info.processName, 'recorder');
    assert.equal(info.dateTime, '2026/03/17 10:00:00:123');
    assert.equal(info.tagName, 'drive-42');
    assert.equal(info.timezone, 480);
    assert.equal(info.startTimestamp, 1_773_712_800_123);
    assert.equal(info.hasCompleted, true);
    assert.equal(info.blankDuration, 500);
    assert.equal(info.totalDuration, 3000);
    assert.equal(info.hasSchema, true);
    assert.equal(
      info.totalRawSize,
      pcRaw.length + memsetRaw.length + REQ.length + RESP.length + textRaw.length + PLAIN.length,
    );
    assert.deepEqual(
      info.urls.map((m) => [m.index, m.url, m.type, m.ser, m.schemaType, m.count, m.loss, m.freq]),
      [
        [7, 'dds://planner', 'Method', 'pb.Req|pb.Resp', SchemaType.Protobuf, 2, -1, 0],
        [2, 'dds://text', 'Event', 'json', SchemaType.Raw, 2, 0.5, 0.5],
        [0, 'shm://lidar', 'Event', 'raw', SchemaType.Raw, 2, 0, 4],
      ],
    );
    assert.deepEqual(
      reader.schemas().map((s) => [s.name, s.encoding, s.schemaType, [...s.data]]),
      [
        ['pb.Req', 'protobuf', SchemaType.Protobuf, [1, 2, 3]],
        ['pb.Resp', 'proto', SchemaType.Protobuf, [4, 5]],
      ],
    );
    reader.close();
  });

  test('frames: ORDER BY elapsed, rowid; compressed rows decompressed; unknown url ids skipped', () => {
    const reader = VdbReader.open(driver, build());
    const frames = [...reader.frames({})];
    assert.deepEqual(
      frames.map((f) => [f.timestamp, f.url, f.actionType, f.serType, f.schemaType]),
      [
        [500_000, 'dds://planner', ActionType.ClientRequest, 'pb.Req|pb.Resp', SchemaType.Protobuf],
        [500_000, 'dds://planner', ActionType.ClientResponse, 'pb.Req|pb.Resp', SchemaType.Protobuf],
        [1_000_000, 'dds://text', ActionType.Publish, 'json', SchemaType.Raw],
        [2_000_000, ...PC],
        [2_500_000, 'shm://lidar', ActionType.Unknown, 'raw', SchemaType.Raw],
        [3_000_000, 'dds://text', ActionType.Publish, 'json', SchemaType.Raw],
      ],
    );
    assert.deepEqual(frames[0]!.data, REQ);
    assert.deepEqual(frames[2]!.data, PLAIN);
    assert.deepEqual(frames[3]!.data, pcRaw);
    assert.deepEqual(frames[4]!.data, memsetRaw);
    assert.deepEqual(frames[5]!.data, textRaw);
    assert.deepEqual(
      [...reader.frames({ urls: ['dds://text', 'shm://lidar'], beginUs: 1_000_000, endUs: 2_500_000 })].map(
        (f) => f.timestamp,
      ),
      [1_000_000, 2_000_000, 2_500_000],
    );
    reader.close();
  });

  test('legacy idx_elapsed (+ idx_url): elapsed order, no url index', () => {
    const reader = VdbReader.open(driver, build({ index: 'idx_elapsed' }));
    assert.equal(reader.vdbFacts.hasElapsedIndex, true);
    assert.equal(reader.vdbFacts.hasUrlIndex, false);
    assert.deepEqual(
      [...reader.frames({})].map((f) => f.timestamp),
      [500_000, 500_000, 1_000_000, 2_000_000, 2_500_000, 3_000_000],
    );
    reader.close();
  });

  test('no index: rowid order, blank from the first natural row, total from the header', () => {
    const reader = VdbReader.open(driver, build({ index: 'none', duration: 2_750_000 }));
    assert.equal(reader.vdbFacts.hasElapsedIndex, false);
    assert.equal(reader.info().blankDuration, 2000);
    assert.equal(reader.info().totalDuration, 2750);
    assert.deepEqual(
      [...reader.frames({})].map((f) => f.timestamp),
      [2_000_000, 500_000, 500_000, 3_000_000, 1_000_000, 2_500_000],
    );
    reader.close();
  });

  test('incomplete file: total duration stays the header value', () => {
    const reader = VdbReader.open(driver, build({ complete: 0, duration: 2_200_000 }));
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(reader.info().totalDuration, 2200);
    reader.close();
  });

  for (const none of ['None', 'none', 'NONE', '']) {
    test(`header compress "${none}": framed blobs are returned as stored`, () => {
      const reader = VdbReader.open(driver, build({ compress: none }));
      const pc = [...reader.frames({ urls: ['shm://lidar'] })][0]!;
      assert.deepEqual(pc.data, pcFrame);
      reader.close();
    });
  }
});
