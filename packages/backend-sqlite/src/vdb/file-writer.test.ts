import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, formatVlinkDate, SchemaType, type WriterConfig } from '@vlink/bag-core';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { pattern, spyDriver, tempDir, withDb, rawFrame } from '../testing/util.js';
import { type OpenWriterOptions, openWriter, PROTO, REQ, RESP } from './open-writer.test.helper.js';
import * as SQL from './sql.js';
import { writeFrame } from '@vlink/bag-core/testing';

const driver = await loadDriver();
const tmp = tempDir('writer');
after(() => tmp.cleanup());

const frame = rawFrame;
/** A writer whose context knows the three protobuf schemas (`d`: another driver). */
const open = (config: Partial<WriterConfig> = {}, options: OpenWriterOptions & { d?: typeof driver } = {}) =>
  openWriter(options.d ?? driver, tmp, config, { schemas: [PROTO, REQ, RESP], ...options });

function query(path: string, sql: string, ...params: (string | number)[]): SqlRow[] {
  return withDb(driver, path, (db) => db.prepare(sql).all(...params), true);
}

const strip = (ddl: string) => ddl.replace(' IF NOT EXISTS', '').replace(/;$/, '');

describe('VdbFileWriter: file layout', () => {
  test('DDL equals the text of the format reference, in creation order, index last', () => {
    const { path, writer } = open();
    writer.close();
    const rows = query(path, 'SELECT type, name, sql FROM sqlite_master ORDER BY rowid');
    assert.deepEqual(
      rows.map((r) => r['sql']),
      SQL.DDL.map(strip),
    );
    assert.deepEqual(
      rows.map((r) => r['name']),
      ['VLinkHeader', 'VLinkSchemas', 'VLinkUrls', 'VLinkDatas', 'idx_elapsed_url'],
    );
    assert.equal(
      strip(SQL.CREATE_HEADER),
      'CREATE TABLE VLinkHeader(major INTEGER, minor INTEGER, patch INTEGER, count INTEGER, duration INTEGER, accuracy TEXT, compress TEXT, process TEXT, date TEXT, tag TEXT, complete INTEGER, timezone INTEGER, start_timestamp INTEGER)',
    );
  });

  test('pragmas run in VLink order inside the open sequence; page size 16384; BEGIN precedes the DDL', () => {
    const { driver: spy, log } = spyDriver(driver);
    const { path, writer } = open({}, { d: spy });
    writer.close();
    const calls = log.calls;
    const pragmas = calls.filter((c) => c.startsWith('PRAGMA') && !c.includes('busy_timeout'));
    assert.deepEqual(pragmas.slice(0, 7), SQL.writerPragmas(false));
    const begin = calls.indexOf('BEGIN;');
    assert.ok(begin > calls.indexOf('PRAGMA locking_mode = EXCLUSIVE;'));
    assert.ok(begin < calls.indexOf(SQL.CREATE_HEADER));
    assert.ok(calls.indexOf(`run: ${SQL.INSERT_HEADER}`) < calls.indexOf(SQL.CREATE_SCHEMAS));
    assert.ok(calls.indexOf(SQL.CREATE_INDEX) > calls.indexOf(SQL.CREATE_DATAS));
    assert.equal(query(path, 'PRAGMA page_size')[0]!['page_size'], 16384);
  });

  test('header row: version, counts, accuracy, compress, process, date, tag, complete, timezone, start', () => {
    const { path, writer, context } = open();
    writeFrame(writer, frame(5_000, 'dds://a', pattern(10)));
    writeFrame(writer, frame(2_500_000, 'dds://a', pattern(10)));
    writeFrame(writer, frame(1_000_000, 'dds://a', pattern(10)));
    writer.close();
    const rows = query(
      path,
      'SELECT rowid AS r, *, typeof(count) AS tc, typeof(start_timestamp) AS ts FROM VLinkHeader',
    );
    assert.equal(rows.length, 1);
    const h = rows[0]!;
    assert.equal(h['r'], 1);
    assert.deepEqual([h['major'], h['minor'], h['patch']], [2, 1, 0]);
    assert.equal(h['count'], 3);
    assert.equal(h['duration'], 2_500_000);
    assert.equal(h['accuracy'], 'MicroSecond');
    assert.equal(h['compress'], 'None');
    assert.equal(h['process'], context.processName);
    assert.equal(h['date'], formatVlinkDate(context.startTimestamp));
    assert.equal(h['tag'], 'Empty');
    assert.equal(h['complete'], 1);
    assert.equal(h['timezone'], 480);
    assert.equal(h['start_timestamp'], context.startTimestamp);
    assert.equal(h['tc'], 'integer');
    assert.equal(h['ts'], 'integer');
  });

  test('an existing file is replaced; missing parent directories are created', () => {
    const path = join(tmp.dir, 'deep', 'er', 'x.vdb');
    let w = open({}, { path }).writer;
    writeFrame(w, frame(1, 'dds://a', pattern(4)));
    w.close();
    writeFileSync(`${path}-journal`, 'stale');
    w = open({}, { path }).writer;
    w.close();
    assert.equal(query(path, 'SELECT COUNT(*) AS n FROM VLinkDatas')[0]!['n'], 0);
    assert.equal(existsSync(`${path}-journal`), false);
  });

  test('rows store elapsed verbatim (out of order too), the global url id and the action text', () => {
    const { path, writer } = open();
    writeFrame(writer, frame(300, 'dds://b', pattern(3), { actionType: ActionType.Subscribe }));
    writeFrame(writer, frame(100, 'dds://a', pattern(4), { actionType: ActionType.Set }));
    writeFrame(writer, frame(200, 'dds://b', new Uint8Array(0), { actionType: ActionType.Get }));
    writeFrame(writer, frame(50, 'dds://c', pattern(1), { actionType: 99 as ActionType }));
    writer.close();
    const rows = query(
      path,
      'SELECT elapsed, url, action, data, typeof(elapsed) AS te, typeof(url) AS tu FROM VLinkDatas ORDER BY rowid',
    );
    assert.deepEqual(
      rows.map((r) => [r['elapsed'], r['url'], r['action'], r['te'], r['tu']]),
      [
        [300, 0, 'Sub', 'integer', 'integer'],
        [100, 1, 'Set', 'integer', 'integer'],
        [200, 0, 'Get', 'integer', 'integer'],
        [50, 2, 'Unknown', 'integer', 'integer'],
      ],
    );
    assert.deepEqual([...(rows[0]!['data'] as Uint8Array)], [...pattern(3)]);
    assert.equal(query(path, 'SELECT duration FROM VLinkHeader')[0]!['duration'], 300);
    assert.deepEqual(
      query(path, 'PRAGMA integrity_check').map((r) => Object.values(r)[0]),
      ['ok'],
    );
  });
});

describe('VdbFileWriter: urls and schemas', () => {
  test('url rows: id by first appearance, type by first action, ser/encoding, count/size/freq, loss', () => {
    const { path, writer } = open();
    writeFrame(
      writer,
      frame(1_000_000, 'dds://cam', pattern(100), { serType: 'pb.Image', schemaType: SchemaType.Protobuf }),
    );
    writeFrame(writer, frame(1_100_000, 'dds://field', pattern(8), { actionType: ActionType.Set }));
    writeFrame(
      writer,
      frame(1_500_000, 'dds://cam', pattern(50), { serType: 'pb.Image', schemaType: SchemaType.Protobuf }),
    );
    writeFrame(
      writer,
      frame(2_000_000, 'dds://cam', pattern(50), { serType: 'pb.Image', schemaType: SchemaType.Unknown }),
    );
    writeFrame(
      writer,
      frame(1_200_000, 'dds://rpc', pattern(7), {
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ServerRequest,
      }),
    );
    writeFrame(
      writer,
      frame(1_300_000, 'dds://rpc', pattern(9), {
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ServerResponse,
      }),
    );
    writer.setUrlLoss('dds://cam', 0.25);
    writer.setUrlLoss('dds://field', 3);
    writer.close();
    const rows = query(path, 'SELECT *, typeof(loss) AS tl, typeof(freq) AS tf FROM VLinkUrls ORDER BY id');
    assert.deepEqual(
      rows.map((r) => [r['id'], r['url'], r['type'], r['ser'], r['encoding'], r['count'], r['size'], r['loss']]),
      [
        [0, 'dds://cam', 'Event', 'pb.Image', 'protobuf', 3, 200, 0.25],
        [1, 'dds://field', 'Field', 'raw', 'raw', 1, 8, -1],
        [2, 'dds://rpc', 'Method', 'pb.Req|pb.Resp', 'protobuf', 2, 16, 0],
      ],
    );
    assert.equal(rows[0]!['freq'], 3 / 1); // 3 messages over 1 s (first 1.0 s, last 2.0 s)
    assert.equal(rows[1]!['freq'], 0); // one message: no span
    assert.equal(rows[2]!['freq'], 0); // Method urls never get a frequency
    assert.equal(rows[0]!['tl'], 'real');
    assert.equal(rows[0]!['tf'], 'real');
  });

  test('RPC: each half embeds its own schema; halves of different families make the url family unknown', () => {
    const { path, writer } = open();
    writeFrame(
      writer,
      frame(1, 'dds://rpc', pattern(3), {
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ClientRequest,
      }),
    );
    writeFrame(
      writer,
      frame(2, 'dds://rpc', pattern(3), {
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ClientResponse,
      }),
    );
    writeFrame(
      writer,
      frame(3, 'dds://rpc', pattern(3), {
        serType: 'pb.Req|pb.Resp',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.ClientResponse,
      }),
    );
    writeFrame(
      writer,
      frame(4, 'dds://mixed', pattern(3), {
        serType: 'json|pb.Resp',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.ClientRequest,
      }),
    );
    writer.close();
    const schemas = query(path, 'SELECT ser, encoding, data FROM VLinkSchemas ORDER BY rowid');
    assert.deepEqual(
      schemas.map((r) => [r['ser'], r['encoding']]),
      [
        ['pb.Req', 'protobuf'],
        ['pb.Resp', 'protobuf'],
      ],
    );
    assert.deepEqual([...(schemas[1]!['data'] as Uint8Array)], [...RESP.data]);
    const urls = query(path, 'SELECT url, ser, encoding FROM VLinkUrls ORDER BY id');
    assert.deepEqual(
      urls.map((r) => [r['url'], r['ser'], r['encoding']]),
      [
        ['dds://rpc', 'pb.Req|pb.Resp', 'protobuf'],
        ['dds://mixed', 'json|pb.Resp', ''],
      ],
    );
  });

  test('schemas: once per name+family per file; writeSchema embeds; empty data is never written', () => {
    const { path, writer } = open();
    for (let i = 0; i < 3; i++) {
      writeFrame(writer, frame(i, 'dds://cam', pattern(4), { serType: 'pb.Image', schemaType: SchemaType.Protobuf }));
    }
    writer.writeSchema(PROTO);
    writer.writeSchema({ name: 'fb.Map', encoding: '', schemaType: SchemaType.Flatbuffers, data: pattern(9) });
    writer.writeSchema({ name: 'fb.Map', encoding: 'bfbs', schemaType: SchemaType.Flatbuffers, data: pattern(9) });
    writer.writeSchema({
      name: 'pb.Empty',
      encoding: 'protobuf',
      schemaType: SchemaType.Protobuf,
      data: new Uint8Array(0),
    });
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT ser, encoding FROM VLinkSchemas ORDER BY rowid').map((r) => [r['ser'], r['encoding']]),
      [
        ['pb.Image', 'protobuf'],
        ['fb.Map', 'flatbuffers'],
      ],
    );
  });

  test('an empty ser is filled by the first non-empty one (UPDATE ser, encoding)', () => {
    const { driver: spy, log } = spyDriver(driver);
    const { path, writer } = open({}, { d: spy });
    writeFrame(writer, frame(1, 'dds://a', pattern(3), { serType: '', schemaType: SchemaType.Unknown }));
    writeFrame(writer, frame(2, 'dds://a', pattern(3), { serType: 'json', schemaType: SchemaType.Unknown }));
    writeFrame(writer, frame(3, 'dds://a', pattern(3), { serType: '', schemaType: SchemaType.Unknown }));
    writer.close();
    assert.equal(log.calls.filter((c) => c === `run: ${SQL.UPDATE_URL_SER}`).length, 1);
    assert.deepEqual(
      query(path, 'SELECT ser, encoding, count FROM VLinkUrls').map((r) => [r['ser'], r['encoding'], r['count']]),
      [['json', 'raw', 3]],
    );
  });

  test('a changed ser or a changed known family is rejected with SCHEMA_CONFLICT and not stored', () => {
    const { path, writer } = open();
    writeFrame(writer, frame(1, 'dds://a', pattern(3), { serType: 'pb.Image', schemaType: SchemaType.Protobuf }));
    const conflict = (e: unknown) => BagError.isInstance(e) && e.code === 'SCHEMA_CONFLICT' && e.url === 'dds://a';
    assert.throws(
      () =>
        writeFrame(writer, frame(2, 'dds://a', pattern(3), { serType: 'pb.Other', schemaType: SchemaType.Protobuf })),
      conflict,
    );
    assert.throws(
      () =>
        writeFrame(
          writer,
          frame(3, 'dds://a', pattern(3), { serType: 'pb.Image', schemaType: SchemaType.Flatbuffers }),
        ),
      conflict,
    );
    writeFrame(writer, frame(4, 'dds://a', pattern(3), { serType: '', schemaType: SchemaType.Unknown }));
    writeFrame(writer, frame(5, 'dds://a', pattern(3), { serType: 'pb.Image', schemaType: SchemaType.Protobuf }));
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid').map((r) => r['elapsed']),
      [1, 4, 5],
    );
    assert.deepEqual(
      query(path, 'SELECT ser, encoding, count FROM VLinkUrls').map((r) => [r['ser'], r['encoding'], r['count']]),
      [['pb.Image', 'protobuf', 3]],
    );
    assert.equal(query(path, 'SELECT count FROM VLinkHeader')[0]!['count'], 3);
  });
});
