import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, resolveWriterConfig, SchemaType, type Frame } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { pattern, spyDriver, tempDir, withDb } from '../testing/util.js';
import { VdbReader } from './reader.js';
import * as SQL from './sql.js';

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('maint');
after(() => tmp.cleanup());

function frame(timestamp: number, url: string): Frame {
  return {
    timestamp,
    url,
    data: pattern(16, timestamp),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
}

async function record(n = 10): Promise<string> {
  const path = tmp.path('m.vdb');
  const writer = await backend.createWriter(path, resolveWriterConfig(), createTestContext());
  for (let i = 0; i < n; i++) writeFrame(writer, frame(1_000_000 + i * 500_000, i % 2 ? 'dds://a' : 'dds://b'));
  writer.close();
  return path;
}

function query(path: string, sql: string): SqlRow[] {
  return withDb(driver, path, (db) => db.prepare(sql).all(), true);
}

const indexes = (path: string) =>
  query(path, "SELECT name FROM sqlite_master WHERE type='index' ORDER BY name").map((r) => r['name']);

describe('.vdb maintenance', () => {
  test('check() is true for a clean file and false when metadata disagree', async () => {
    const path = await record();
    let reader = VdbReader.open(driver, path);
    assert.equal(await reader.check(), true);
    reader.close();
    withDb(driver, path, (db) => db.exec('UPDATE VLinkHeader SET count = 999;'));
    reader = VdbReader.open(driver, path);
    assert.equal(await reader.check(), false);
    reader.close();
    withDb(driver, path, (db) =>
      db.exec("UPDATE VLinkHeader SET count = 10; UPDATE VLinkUrls SET loss = 2 WHERE url = 'dds://a';"),
    );
    reader = VdbReader.open(driver, path);
    assert.equal(await reader.check(), false);
    reader.close();
  });

  test('reindex() drops legacy indexes and creates idx_elapsed_url with the exact statements', async () => {
    const path = await record();
    withDb(driver, path, (db) =>
      db.exec(
        'DROP INDEX idx_elapsed_url; CREATE INDEX idx_elapsed ON VLinkDatas(elapsed); CREATE INDEX idx_url ON VLinkDatas(url);',
      ),
    );
    const { driver: spy, log } = spyDriver(driver);
    const reader = VdbReader.open(spy, path, { readOnly: false });
    assert.equal(reader.vdbFacts.hasUrlIndex, false);
    assert.equal(await reader.reindex(), true);
    assert.deepEqual(log.calls.slice(-SQL.REINDEX.length), [...SQL.REINDEX]);
    assert.equal(reader.vdbFacts.hasUrlIndex, true);
    reader.close();
    assert.deepEqual(indexes(path), ['idx_elapsed_url']);
  });

  test('fix() repairs count, freq, duration, complete and (beyond VLink) size after a crash; loss untouched', async () => {
    const path = await record();
    withDb(driver, path, (db) =>
      db.exec(
        'UPDATE VLinkHeader SET count = 3, duration = 7, complete = 0; UPDATE VLinkUrls SET count = 0, freq = 0, size = 1, loss = 0.5;',
      ),
    );
    const { driver: spy, log } = spyDriver(driver);
    const reader = VdbReader.open(spy, path, { readOnly: false });
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(await reader.fix(false), true);
    assert.deepEqual(log.calls.slice(-(SQL.FIX_METADATA.length + SQL.FIX_PRAGMAS.length + 2)), [
      ...SQL.FIX_METADATA,
      SQL.fixSizes(false),
      ...SQL.FIX_PRAGMAS,
      'PRAGMA optimize;',
    ]);
    assert.equal(reader.info().messageCount, 10);
    assert.equal(reader.info().hasCompleted, true);
    reader.close();
    assert.deepEqual(
      query(path, 'SELECT count, duration, complete FROM VLinkHeader').map((r) => [
        r['count'],
        r['duration'],
        r['complete'],
      ]),
      [[10, 5_500_000, 1]],
    );
    // 5 messages per url over 4 s → 1.25 Hz
    assert.deepEqual(
      query(path, 'SELECT url, count, freq, size, loss FROM VLinkUrls ORDER BY id').map((r) => [
        r['url'],
        r['count'],
        r['freq'],
        r['size'],
        r['loss'],
      ]),
      query(path, 'SELECT url, SUM(length(data)) AS n FROM VLinkDatas GROUP BY url ORDER BY url').map((r) => [
        r['url'] === 0 ? 'dds://b' : 'dds://a',
        5,
        1.25,
        r['n'],
        0.5,
      ]),
    );
    assert.equal(await VdbReader.open(driver, path).check(), true, 'the full check agrees with the repaired sizes');
  });

  test('fix(true) vacuums and reindexes', async () => {
    const path = await record(50);
    withDb(driver, path, (db) => db.exec('DELETE FROM VLinkDatas WHERE rowid % 2 = 0; DROP INDEX idx_elapsed_url;'));
    const { driver: spy, log } = spyDriver(driver);
    const reader = VdbReader.open(spy, path, { readOnly: false });
    assert.equal(await reader.fix(true), true);
    assert.ok(log.calls.includes('VACUUM;'));
    assert.equal(reader.info().messageCount, 25);
    assert.equal(await reader.check(), true); // url sizes are stale (fix leaves them) but still sum to totalRawSize
    reader.close();
    assert.deepEqual(indexes(path), ['idx_elapsed_url']);
  });

  test('mutating verbs need readOnly: false', async () => {
    const path = await record();
    const reader = VdbReader.open(driver, path);
    await assert.rejects(reader.reindex(), (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED');
    await assert.rejects(reader.fix(false), (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_SUPPORTED');
    reader.close();
  });

  test('backend.tag() rewrites the tag (adding the column to old files) and reports missing files', async () => {
    const path = await record();
    assert.equal(await backend.tag!(path, 'night-drive'), true);
    assert.equal(query(path, 'SELECT tag FROM VLinkHeader')[0]!['tag'], 'night-drive');
    // an old file without the tag column
    const old = tmp.path('old.vdb');
    withDb(driver, old, (db) =>
      db.exec(
        "CREATE TABLE VLinkHeader(major INTEGER, minor INTEGER, patch INTEGER, count INTEGER, duration INTEGER, accuracy TEXT, compress TEXT, process TEXT, date TEXT); INSERT INTO VLinkHeader VALUES (2, 0, 0, 0, 0, 'MicroSecond', 'None', 'p', 'd');",
      ),
    );
    assert.equal(await backend.tag!(old, 'legacy'), true);
    assert.equal(query(old, 'SELECT tag FROM VLinkHeader')[0]!['tag'], 'legacy');
    await assert.rejects(
      backend.tag!(tmp.path('missing.vdb'), 'x'),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND',
    );
  });
});
