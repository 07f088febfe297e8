import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagError,
  CompressType,
  resolveWriterConfig,
  SchemaType,
  type Frame,
  type WriterConfig,
} from '@vlink/bag-core';
import { compressFrame } from '@vlink/bag-core/internal';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { loadDriver, type SqliteConnection } from '../driver/driver.js';
import { pattern, tempDir, withDb } from '../testing/util.js';
import { type Faults, faultyDriver } from './fault-driver.test.helper.js';
import { VdbFileWriter } from './file-writer.js';
import { openWriter } from './open-writer.test.helper.js';
import { VdbRecording } from './recording.js';
import * as SQL from './sql.js';

// The .vdb writer when SQLite fails under it (BEGIN, COMMIT, a statement, the creation of its statements), and the
// side tables (publish times, counters) across a rolled back batch: checked with SQL on the file, or on the writer's
// own connection while it holds the file locked. Mutation testing (group vdb) found these unpinned.
const driver = await loadDriver();
const tmp = tempDir('vdb-faults');
after(() => tmp.cleanup());

function frame(timestamp: number, url: string, more: Partial<Frame> = {}): Frame {
  return {
    timestamp,
    url,
    data: pattern(8, timestamp),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
    ...more,
  };
}

function open(faults: Faults, config: Partial<WriterConfig> = {}, now?: () => number) {
  const { driver: faulty, connections } = faultyDriver(driver, faults);
  const { path, writer, recording } = openWriter(faulty, tmp, config, now ? { now } : {});
  return { path, writer, recording, own: connections[0]! };
}

const rows = (db: SqliteConnection, sql: string) =>
  db
    .prepare(sql)
    .all()
    .map((r) => Object.values(r));
const onFile = (path: string, sql: string) => withDb(driver, path, (db) => rows(db, sql), true);
const hasTable = (db: SqliteConnection, name: string) =>
  rows(db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = '${name}'`).length === 1;

function failsWith(fn: () => unknown, reason: string, file?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(BagError.isInstance(error), String(error));
    assert.equal(error.code, 'IO_ERROR');
    assert.equal(error.reason, reason);
    if (file !== undefined) assert.equal(error.file, file);
    return true;
  });
}

describe('.vdb writer: SQLite failing under it', () => {
  test('a statement that cannot be prepared fails the open as IO_ERROR "cannot create .vdb file"', () => {
    const path = tmp.path('unprepared.vdb');
    const { driver: faulty } = faultyDriver(driver, { prepare: (sql) => sql === SQL.INSERT_DATA });
    const config = resolveWriterConfig({});
    failsWith(
      () => VdbFileWriter.open(faulty, path, config, createTestContext(), new VdbRecording(config)),
      'cannot create .vdb file',
      path,
    );
  });

  test('a failed BEGIN or COMMIT is named; the rows of the failed batch are gone, the committed ones kept', () => {
    let failing = '';
    const { path, writer } = open({ exec: (sql) => sql === failing });
    writeFrame(writer, frame(1, 'dds://a'));
    writer.commit();
    failing = 'BEGIN;';
    failsWith(() => writeFrame(writer, frame(2, 'dds://a')), 'cannot begin a transaction', path);
    failing = '';
    writeFrame(writer, frame(3, 'dds://a'));
    failing = 'COMMIT;';
    failsWith(() => writer.commit(), 'commit failed; the uncommitted batch was rolled back', path);
    // The counters went back to the BEGIN before frame 3.
    assert.deepEqual([writer.rows, writer.lastTs], [1, 1]);
    failing = '';
    writeFrame(writer, frame(4, 'dds://a'));
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid'), [[1], [4]]);
    assert.deepEqual(onFile(path, 'SELECT count, duration FROM VLinkHeader'), [[2, 4]]);
  });

  test('commit() with no batch open, or after close, does nothing', () => {
    const { path, writer } = open({});
    writeFrame(writer, frame(1, 'dds://a'));
    writer.commit();
    writer.commit();
    writer.close();
    writer.commit();
    assert.deepEqual(onFile(path, 'SELECT elapsed FROM VLinkDatas'), [[1]]);
  });

  test('a failed INSERT of a frame says so', () => {
    let failing = false;
    const { path, writer } = open({ run: (sql) => failing && sql === SQL.INSERT_DATA });
    writeFrame(writer, frame(1, 'dds://a'));
    failing = true;
    failsWith(
      () => writeFrame(writer, frame(2, 'dds://a')),
      'cannot insert a frame; the uncommitted batch was rolled back',
    );
    failing = false;
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT elapsed FROM VLinkDatas'), []);
  });
});

describe('.vdb writer: schema rows', () => {
  test('a schema without a name, or without an encoding or known family, is not written', () => {
    const { path, writer } = open({});
    const data = Uint8Array.of(1, 2, 3);
    writer.writeSchema({ name: '', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data });
    writer.writeSchema({ name: 'my.Type', encoding: '', schemaType: SchemaType.Unknown, data });
    writer.writeSchema({ name: 'pb.Kept', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data });
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT ser, encoding FROM VLinkSchemas'), [['pb.Kept', 'protobuf']]);
  });
});

describe('.vdb writer: schema rows by name and family', () => {
  test('a schema keeps its own encoding text', () => {
    const { path, writer } = open({});
    writer.writeSchema({ name: 'fb.X', encoding: 'bfbs', schemaType: SchemaType.Flatbuffers, data: pattern(6) });
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT ser, encoding FROM VLinkSchemas'), [['fb.X', 'bfbs']]);
  });

  test('a schema found for a url of no family, whose encoding names one, is not written again for that family', () => {
    // The recording knows my.Type for the unknown family, with a protobuf encoding: written for the url, it also
    // stands for (my.Type, protobuf), so pushing the same schema as protobuf afterwards adds no second row.
    const data = pattern(12);
    const known = { name: 'my.Type', encoding: 'protobuf', schemaType: SchemaType.Unknown, data };
    const path = tmp.path('known.vdb');
    const config = resolveWriterConfig({});
    const context = createTestContext({ schemas: [known] });
    const writer = VdbFileWriter.open(driver, path, config, context, new VdbRecording(config));
    writeFrame(writer, frame(1, 'dds://a', { serType: 'my.Type', schemaType: SchemaType.Unknown }));
    writer.writeSchema({ ...known, schemaType: SchemaType.Protobuf });
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT ser, encoding FROM VLinkSchemas'), [['my.Type', 'protobuf']]);
  });
});

describe('.vdb writer: url rows and accounting', () => {
  test('a url row follows a change of its ser alone, and of its family alone', () => {
    const { path, writer } = open({});
    const unknown = { schemaType: SchemaType.Unknown };
    writeFrame(writer, frame(1, 'dds://a', { serType: '', ...unknown }));
    writeFrame(writer, frame(2, 'dds://a', { serType: 'my.Type', ...unknown })); // ser '' → my.Type, family stays unknown
    writeFrame(writer, frame(3, 'dds://b', { serType: 'my.Type', ...unknown }));
    writeFrame(writer, frame(4, 'dds://b', { serType: 'my.Type', schemaType: SchemaType.Protobuf })); // family only
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT url, ser, encoding FROM VLinkUrls ORDER BY id'), [
      ['dds://a', 'my.Type', ''],
      ['dds://b', 'my.Type', 'protobuf'],
    ]);
  });

  test('a frame-shaped payload that the writer compresses again counts its own length', () => {
    // Both magics around 4000 compressible bytes, a made-up original size of 7 in the header.
    const real = compressFrame(pattern(500), 3)!;
    const shaped = Uint8Array.of(...real.subarray(0, 4), 0, 0, 0, 7, ...new Uint8Array(4000), ...real.subarray(-4));
    const { path, writer, recording } = open({}, { compress: CompressType.Lzav });
    writeFrame(writer, frame(1, 'dds://a', { data: shaped }));
    assert.equal(recording.size, shaped.length);
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT size FROM VLinkUrls'), [[shaped.length]]);
    assert.ok(
      (onFile(path, 'SELECT length(data) FROM VLinkDatas')[0]![0] as number) < shaped.length,
      'stored compressed',
    );
  });
});

describe('.vdb writer: counters (VLinkBagCounters) before close', () => {
  test('a tick that cannot store the counters says so and rolls back', () => {
    let failing = false;
    const { writer, own } = open({ run: (sql) => failing && sql === SQL.INSERT_COUNTER });
    writeFrame(writer, frame(1, 'dds://a'));
    writer.setCounters({ 'dds://a': { queue: 1 } });
    failing = true;
    failsWith(() => writer.tick(), 'cannot store the counters; the uncommitted batch was rolled back');
    assert.deepEqual(rows(own, 'SELECT elapsed FROM VLinkDatas'), [], 'the open batch went with it');
    // With no batch open, the tick's own transaction goes: no half-made table is left.
    assert.equal(hasTable(own, 'VLinkBagCounters'), false);
    writeFrame(writer, frame(2, 'dds://a'));
    writer.commit();
    failsWith(() => writer.tick(), 'cannot store the counters; the uncommitted batch was rolled back');
    assert.equal(hasTable(own, 'VLinkBagCounters'), false);
    assert.deepEqual(rows(own, 'SELECT elapsed FROM VLinkDatas'), [[2]]);
    failing = false;
    writer.close();
  });

  test('a tick stores counters handed over while idle, on the file at once', () => {
    const { writer, own } = open({});
    writeFrame(writer, frame(1, 'dds://a'));
    writer.commit();
    writer.setCounters({ 'dds://a': { missedSlot: 2 } });
    writer.tick();
    assert.deepEqual(rows(own, 'SELECT url, cause, count FROM VLinkBagCounters'), [['dds://a', 'missedSlot', 2]]);
    writer.close();
  });

  test('the metadata refresh stores new counters with the frames', () => {
    let clock = 0;
    const { writer, own } = open({}, {}, () => clock);
    writeFrame(writer, frame(1, 'dds://a'));
    writer.setCounters({ 'dds://a': { queue: 4 } });
    clock = 1500;
    // The clock is read at a stride; a few frames reach the read that finds the refresh due.
    for (let t = 2; t < 10; t++) writeFrame(writer, frame(t, 'dds://a'));
    assert.deepEqual(rows(own, 'SELECT url, cause, count FROM VLinkBagCounters'), [['dds://a', 'queue', 4]]);
    writer.close();
  });

  test('counters stored in a rolled back batch are stored again by the next tick; with none, a tick does nothing', () => {
    let failing = false;
    let clock = 0;
    const { writer, own, path } = open({ run: (sql) => failing && sql === SQL.INSERT_DATA }, {}, () => clock);
    let begins = 0;
    const before = open({
      run: (sql) => failing && sql === SQL.INSERT_DATA,
      exec: (sql) => {
        if (sql === 'BEGIN;') begins++;
        return false;
      },
    });
    // Without counters: a failure, then a tick with nothing to store: no transaction is opened.
    writeFrame(before.writer, frame(1, 'dds://a'));
    failing = true;
    assert.throws(() => writeFrame(before.writer, frame(2, 'dds://a')));
    failing = false;
    const begun = begins;
    before.writer.tick();
    assert.equal(begins, begun, 'no BEGIN');
    assert.equal(hasTable(before.own, 'VLinkBagCounters'), false);
    before.writer.close();

    writeFrame(writer, frame(1, 'dds://a'));
    writer.setCounters({ 'dds://a': { queue: 7 } });
    clock = 1500;
    for (let t = 2; t < 10; t++) writeFrame(writer, frame(t, 'dds://a'));
    assert.equal(hasTable(own, 'VLinkBagCounters'), true, 'stored by the refresh');
    failing = true;
    assert.throws(() => writeFrame(writer, frame(10, 'dds://a')));
    failing = false;
    assert.equal(hasTable(own, 'VLinkBagCounters'), false, 'rolled back with the batch');
    writer.tick();
    assert.deepEqual(rows(own, 'SELECT url, cause, count FROM VLinkBagCounters'), [['dds://a', 'queue', 7]]);
    writer.close();
    assert.deepEqual(onFile(path, 'SELECT url, cause, count FROM VLinkBagCounters'), [['dds://a', 'queue', 7]]);
  });
});

describe('.vdb writer: publish times (VLinkBagPublishTimes) across a rolled back batch', () => {
  test('a table created in a rolled back batch is created again by the next publish time', () => {
    let failing = false;
    const { path, writer } = open({ run: (sql) => failing && sql === SQL.INSERT_DATA });
    writeFrame(writer, frame(1000, 'dds://a', { publishTime: 900 })); // creates the table in this batch
    failing = true;
    assert.throws(() => writeFrame(writer, frame(2000, 'dds://a')));
    failing = false;
    writeFrame(writer, frame(3000, 'dds://a', { publishTime: 2500 }));
    writer.close();
    assert.deepEqual(
      onFile(path, 'SELECT d.elapsed, p.publish FROM VLinkDatas d JOIN VLinkBagPublishTimes p ON p.id = d.rowid'),
      [[3000, 2500]],
    );
  });

  test('after a rollback, an evicted row still takes its publish time with it; with no table, eviction goes on', () => {
    let failing = false;
    const faults = { run: (sql: string) => failing && sql === SQL.INSERT_DATA };
    const config = { maxRowCount: 2, enableLimit: true };
    // With the table committed before the failure.
    const withTable = open(faults, config);
    writeFrame(withTable.writer, frame(1000, 'dds://a', { publishTime: 900 }));
    writeFrame(withTable.writer, frame(2000, 'dds://a', { publishTime: 1900 }));
    withTable.writer.commit();
    failing = true;
    assert.throws(() => writeFrame(withTable.writer, frame(2500, 'dds://a')));
    failing = false;
    writeFrame(withTable.writer, frame(3000, 'dds://a')); // rows 2, then 3
    writeFrame(withTable.writer, frame(4000, 'dds://a')); // evicts the row at 1000 and its publish time
    withTable.writer.close();
    assert.deepEqual(
      onFile(withTable.path, 'SELECT id FROM VLinkBagPublishTimes WHERE id NOT IN (SELECT rowid FROM VLinkDatas)'),
      [],
    );
    assert.deepEqual(onFile(withTable.path, 'SELECT publish FROM VLinkBagPublishTimes'), [[1900]]);
    // Without the table: the eviction after the rollback must not look for it.
    const without = open(faults, config);
    writeFrame(without.writer, frame(1000, 'dds://a'));
    without.writer.commit();
    failing = true;
    assert.throws(() => writeFrame(without.writer, frame(1500, 'dds://a')));
    failing = false;
    for (const t of [2000, 3000, 4000]) writeFrame(without.writer, frame(t, 'dds://a')); // 4000 evicts 1000
    without.writer.close();
    assert.deepEqual(onFile(without.path, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid'), [[2000], [3000], [4000]]);
  });
});
