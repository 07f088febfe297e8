import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, type WriterConfig } from '@vlink/bag-core';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { pattern, spyDriver, tempDir, withDb, rawFrame } from '../testing/util.js';
import { type OpenWriterOptions, openWriter, PROTO, REQ, RESP } from './open-writer.test.helper.js';
import * as SQL from './sql.js';
import { writeFrame } from '@vlink/bag-core/testing';

// VdbFileWriter's transactions and commits (split from file-writer.test.ts).

const driver = await loadDriver();
const tmp = tempDir('writer-transactions');
after(() => tmp.cleanup());

const frame = rawFrame;
/** A writer whose context knows the three protobuf schemas (`d`: another driver). */
const open = (config: Partial<WriterConfig> = {}, options: OpenWriterOptions & { d?: typeof driver } = {}) =>
  openWriter(options.d ?? driver, tmp, config, { schemas: [PROTO, REQ, RESP], ...options });

function query(path: string, sql: string, ...params: (string | number)[]): SqlRow[] {
  return withDb(driver, path, (db) => db.prepare(sql).all(...params), true);
}

describe('VdbFileWriter: transactions', () => {
  test('commits when the bytes since the last commit exceed cacheSize, then BEGINs on the next write', () => {
    const { driver: spy, log } = spyDriver(driver);
    const { writer } = open({ cacheSize: 100 }, { d: spy });
    const start = log.calls.length;
    for (let i = 0; i < 5; i++) writeFrame(writer, frame(i, 'dds://a', pattern(60)));
    const tx = log.calls.slice(start).filter((c) => c === 'BEGIN;' || c === 'COMMIT;');
    // 60 → 120 > 100 commit; 60 → 120 commit; 60 still open
    assert.deepEqual(tx, ['BEGIN;', 'COMMIT;', 'BEGIN;', 'COMMIT;', 'BEGIN;']);
    writer.close();
  });

  test('tick() commits a transaction open for more than 3 s; metadata refreshes after 1 s', () => {
    let clock = 0;
    const { driver: spy, log } = spyDriver(driver);
    const { writer } = open({}, { d: spy, now: () => clock });
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    const updates = () =>
      log.calls.filter((c) => c === `run: ${SQL.UPDATE_URL_COUNT}` || c === `run: ${SQL.UPDATE_HEADER_COUNT}`).length;
    assert.equal(updates(), 0);
    // The clock is read at a stride that adapts to the write rate (here: a frozen clock, so it widens); advancing
    // it in realistic steps shows the refresh happens once, a few frames after 1 s.
    for (let i = 0; i < 50; i++) writeFrame(writer, frame(2 + i, 'dds://a', pattern(4)));
    assert.equal(updates(), 0);
    let writes = 0;
    while (updates() === 0 && writes < 10_000) {
      clock += 1;
      writeFrame(writer, frame(100 + writes++, 'dds://a', pattern(4)));
    }
    assert.equal(updates(), 2);
    assert.ok(clock >= 1000 && clock < 1010, `refreshed at ${clock} ms`);
    for (let i = 0; i < 50; i++) writeFrame(writer, frame(20_000 + i, 'dds://a', pattern(4)));
    assert.equal(updates(), 2);
    clock = 3000;
    writer.tick();
    assert.equal(log.calls.at(-1), `run: ${SQL.INSERT_DATA}`);
    clock = 3002;
    writer.tick();
    assert.equal(log.calls.at(-1), 'COMMIT;');
    writer.close();
  });

  test('close: COMMIT, BEGIN, url/header/loss updates, complete=1, COMMIT; WAL switched off; optimize', () => {
    const { driver: spy, log } = spyDriver(driver);
    const { path, writer } = open({ walMode: true, optimizeOnExit: true }, { d: spy });
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    writer.setUrlLoss('dds://a', 0.5);
    const start = log.calls.length;
    writer.close();
    writer.close();
    assert.deepEqual(log.calls.slice(start), [
      'COMMIT;',
      'BEGIN;',
      `run: ${SQL.UPDATE_URL_COUNT}`,
      `run: ${SQL.UPDATE_HEADER_COUNT}`,
      `run: ${SQL.UPDATE_URL_LOSS}`,
      `run: ${SQL.UPDATE_HEADER_COMPLETE}`,
      'COMMIT;',
      'PRAGMA journal_mode = OFF;',
      'PRAGMA journal_mode = DELETE;',
      'PRAGMA optimize;',
    ]);
    assert.notEqual(query(path, 'PRAGMA journal_mode')[0]!['journal_mode'], 'wal');
    assert.equal(existsSync(`${path}-wal`), false);
    assert.throws(
      () => writeFrame(writer, frame(2, 'dds://a', pattern(4))),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CLOSED',
    );
  });

  test('a failed INSERT rolls back the batch and restores every counter to the BEGIN snapshot', () => {
    let failNext = false;
    const { driver: spy } = spyDriver(driver, (sql) => failNext && sql === SQL.INSERT_DATA);
    const { path, writer } = open({ cacheSize: 50 }, { d: spy });
    writeFrame(writer, frame(10, 'dds://a', pattern(60))); // committed (60 > 50)
    writeFrame(writer, frame(20, 'dds://b', pattern(5))); // new url in the open batch
    writeFrame(writer, frame(30, 'dds://a', pattern(5)));
    failNext = true;
    assert.throws(
      () => writeFrame(writer, frame(40, 'dds://a', pattern(5))),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR' && /rolled back/.test(e.message),
    );
    failNext = false;
    assert.equal(writer.rows, 1);
    assert.equal(writer.bytes, 60);
    assert.equal(writer.lastTs, 10);
    writeFrame(writer, frame(50, 'dds://c', pattern(7)));
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT elapsed, url FROM VLinkDatas ORDER BY rowid').map((r) => [r['elapsed'], r['url']]),
      [
        [10, 0],
        [50, 1],
      ],
    );
    assert.deepEqual(
      query(path, 'SELECT id, url, count, size FROM VLinkUrls ORDER BY id').map((r) => [
        r['id'],
        r['url'],
        r['count'],
        r['size'],
      ]),
      [
        [0, 'dds://a', 1, 60],
        [1, 'dds://c', 1, 7],
      ],
    );
    assert.deepEqual(
      query(path, 'SELECT count, duration FROM VLinkHeader').map((r) => [r['count'], r['duration']]),
      [[2, 50]],
    );
  });

  test('a url first seen in a rolled back batch is registered again by its next frame under the same url id', () => {
    let failNext = false;
    const { driver: spy } = spyDriver(driver, (sql) => failNext && sql === SQL.INSERT_DATA);
    const { path, writer } = open({ cacheSize: 50 }, { d: spy });
    writer.write(frame(10, 'dds://a', pattern(60)), 0); // committed (60 > 50)
    writer.write(frame(20, 'dds://b', pattern(5)), 7); // new url in the open batch
    writer.write(frame(30, 'dds://b', pattern(5)), 7); // found by its id
    failNext = true;
    assert.throws(
      () => writer.write(frame(40, 'dds://a', pattern(5)), 0),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR' && /rolled back/.test(e.message),
    );
    failNext = false;
    // The rollback forgot dds://b: the id must not bring back its forgotten state.
    writer.write(frame(50, 'dds://b', pattern(7)), 7);
    writer.close();
    const rows = (sql: string) => query(path, sql).map((r) => Object.values(r));
    assert.deepEqual(rows('SELECT elapsed, url FROM VLinkDatas ORDER BY rowid'), [
      [10, 0],
      [50, 1],
    ]);
    assert.deepEqual(rows('SELECT id, url, count, size FROM VLinkUrls ORDER BY id'), [
      [0, 'dds://a', 1, 60],
      [1, 'dds://b', 1, 7],
    ]);
  });
});
