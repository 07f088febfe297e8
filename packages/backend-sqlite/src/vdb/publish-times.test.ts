import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, resolveWriterConfig, SchemaType, type Frame, type WriterConfig } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { pattern, tempDir, withDb } from '../testing/util.js';
import { VdbReader } from './reader.js';
import * as SQL from './sql.js';

// Publish times in .vdb (format reference §2.14): a side table keyed by the VLinkDatas rowid, absent while every
// publish time equals its log time; it follows rows through eviction, fix (VACUUM) and salvage.

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('publish');
after(() => tmp.cleanup());

/** Frame i at 10 ms steps; every third has a publish time 2.5 ms earlier (i = 0: before the start). */
function frame(i: number): Frame {
  const timestamp = i * 10_000;
  const f: Frame = {
    timestamp,
    url: i % 2 ? 'dds://a' : 'dds://b',
    data: pattern(16, i),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
  if (i % 3 === 0) f.publishTime = timestamp - 2_500;
  return f;
}

async function record(
  n: number,
  config: Partial<WriterConfig> = {},
  frames = (i: number) => frame(i),
): Promise<string> {
  const path = tmp.path('p.vdb');
  const writer = await backend.createWriter(path, resolveWriterConfig(config), createTestContext());
  for (let i = 0; i < n; i++) writeFrame(writer, frames(i));
  writer.close();
  return path;
}

const query = (path: string, sql: string): SqlRow[] => withDb(driver, path, (db) => db.prepare(sql).all(), true);
const tables = (path: string) =>
  query(path, "SELECT name, sql FROM sqlite_master WHERE type='table' ORDER BY name").map((r) => [r['name'], r['sql']]);

function readTimes(path: string): Array<[string, number, number | undefined]> {
  const reader = VdbReader.open(driver, path);
  try {
    return Array.from(reader.frames({}), (f) => [f.url, f.timestamp, f.publishTime]);
  } finally {
    reader.close();
  }
}

const want = (ids: number[]) =>
  ids.map((i) => {
    const f = frame(i);
    return [f.url, f.timestamp, f.publishTime ?? f.timestamp];
  });

describe('.vdb publish times', () => {
  test("no side table while publish = log time: VLink's tables only, exactly as VLink creates them", async () => {
    const path = await record(20, {}, (i) => ({ ...frame(i), publishTime: i * 10_000 }));
    assert.deepEqual(tables(path), [
      ['VLinkDatas', SQL.CREATE_DATAS.replace('IF NOT EXISTS ', '').replace(/;$/, '')],
      ['VLinkHeader', SQL.CREATE_HEADER.replace('IF NOT EXISTS ', '').replace(/;$/, '')],
      ['VLinkSchemas', SQL.CREATE_SCHEMAS.replace('IF NOT EXISTS ', '').replace(/;$/, '')],
      ['VLinkUrls', SQL.CREATE_URLS.replace('IF NOT EXISTS ', '').replace(/;$/, '')],
    ]);
    assert.deepEqual(
      readTimes(path).map(([, t, p]) => p === t),
      Array(20).fill(true),
    );
  });

  test('different publish times live in VLinkBagPublishTimes, one row per such frame, keyed by rowid', async () => {
    const path = await record(30);
    const rows = query(path, 'SELECT id, publish FROM VLinkBagPublishTimes ORDER BY id');
    assert.deepEqual(
      rows.map((r) => [Number(r['id']), Number(r['publish'])]),
      Array.from({ length: 10 }, (_, k) => [3 * k + 1, 3 * k * 10_000 - 2_500]),
    );
    assert.deepEqual(readTimes(path), want(Array.from({ length: 30 }, (_, i) => i)));
  });

  test('eviction (enableLimit) removes the entries of evicted rows', async () => {
    const path = await record(60, { enableLimit: true, maxRowCount: 19 });
    const kept = query(path, 'SELECT rowid FROM VLinkDatas ORDER BY rowid').map((r) => Number(r['rowid']));
    const ids = query(path, 'SELECT id FROM VLinkBagPublishTimes ORDER BY id').map((r) => Number(r['id']));
    assert.ok(kept.length < 60);
    assert.deepEqual(
      ids,
      kept.filter((rowid) => (rowid - 1) % 3 === 0),
    );
    assert.deepEqual(readTimes(path), want(kept.map((rowid) => rowid - 1)));
  });

  test('fix(true) (VACUUM after deleting rows) keeps every publish time on its row', async () => {
    const path = await record(50);
    withDb(driver, path, (db) => db.exec('DELETE FROM VLinkDatas WHERE rowid % 2 = 0;'));
    const reader = VdbReader.open(driver, path, { readOnly: false });
    assert.equal(await reader.fix(true), true);
    reader.close();
    assert.deepEqual(readTimes(path), want(Array.from({ length: 25 }, (_, k) => 2 * k)));
  });

  // (That a tick's counters survive a kill is tested with kill -9 in packages/testing: the file is locked while open.)
  test('counters handed over while no frame arrives are stored by the next tick; the latest table wins', async () => {
    const path = tmp.path('ticked.vdb');
    const writer = await backend.createWriter(path, resolveWriterConfig({ walMode: false }), createTestContext());
    writeFrame(writer, frame(1));
    writer.commit();
    writer.setCounters?.({ 'dds://a': { missedSlot: 2 } });
    writer.tick(); // no transaction open: one is begun for the counters and committed
    writeFrame(writer, frame(2));
    writer.setCounters?.({ 'dds://a': { missedSlot: 3 } });
    writer.tick(); // inside the open transaction: stored with the frame and committed
    writer.setCounters?.({ 'dds://a': { missedSlot: 5 }, 'dds://b': { submitFailed: 1 } });
    writeFrame(writer, frame(3)); // a frame without a refresh due: the counters wait for the next refresh or close
    writer.close();
    const closed = VdbReader.open(driver, path);
    try {
      assert.deepEqual(closed.info().counters, { 'dds://a': { missedSlot: 5 }, 'dds://b': { submitFailed: 1 } });
      assert.deepEqual(
        Array.from(closed.frames({}), (f) => f.publishTime),
        [10_000, 20_000, 30_000 - 2_500],
      );
    } finally {
      closed.close();
    }
  });

  test('salvage copies publish times to the copied rows', async () => {
    const path = await record(40);
    withDb(driver, path, (db) => db.exec('DELETE FROM VLinkDatas WHERE rowid <= 5;'));
    const target = tmp.path('salvaged.vdb');
    await backend.salvage!(path, target);
    assert.deepEqual(readTimes(target), want(Array.from({ length: 35 }, (_, k) => k + 5)));
  });
});
