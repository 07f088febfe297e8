import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, resolveWriterConfig, SchemaType } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { tempDir, withDb } from '../testing/util.js';
import { readFacts } from './facts.js';
import { tagVdb } from './maintenance.js';
import { VdbReader } from './reader.js';

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('hostile');
after(() => tmp.cleanup());

async function good(name: string): Promise<string> {
  const path = tmp.path(name);
  const writer = await backend.createWriter(path, resolveWriterConfig(), createTestContext());
  for (let i = 0; i < 50; i++)
    writeFrame(writer, {
      timestamp: i * 1000,
      url: `dds://u${i % 2}`,
      data: new Uint8Array([i]),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  writer.close();
  return path;
}

const corrupt = (text: RegExp) => (e: unknown) => {
  assert.ok(BagError.isInstance(e), String(e));
  assert.equal(e.code, 'CORRUPT_FILE', e.message);
  assert.match(e.message, text);
  return true;
};

describe('.vdb files built to attack the reader are refused before any query runs', () => {
  test('VLinkHeader as a view over an endless recursive query → CORRUPT_FILE at once', async () => {
    const path = await good('view.vdb');
    withDb(driver, path, (db) =>
      db.exec(
        `ALTER TABLE VLinkHeader RENAME TO H0;
         CREATE VIEW VLinkHeader AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
           SELECT H0.* FROM H0, r WHERE r.n < 0;`,
      ),
    );
    const started = performance.now();
    await assert.rejects(backend.openReader(path, {}), corrupt(/defines the view "VLinkHeader"/));
    assert.ok(performance.now() - started < 2000);
  });

  test('a trigger anywhere → CORRUPT_FILE; tag (which UPDATEs the header) refuses it and leaves the data', async () => {
    const path = await good('trigger.vdb');
    withDb(driver, path, (db) =>
      db.exec('CREATE TRIGGER evil AFTER UPDATE ON VLinkHeader BEGIN DELETE FROM VLinkDatas; END;'),
    );
    await assert.rejects(backend.openReader(path, {}), corrupt(/defines the trigger "evil"/));
    assert.throws(() => tagVdb(driver, path, 'x'), corrupt(/trigger "evil"/));
    assert.equal(
      withDb(driver, path, (db) => Number(db.prepare('SELECT COUNT(*) AS n FROM VLinkDatas').get()!['n'])),
      50,
    );
  });

  test('a virtual table → CORRUPT_FILE', async (t) => {
    const path = await good('virtual.vdb');
    let made = false;
    for (const module of ['fts5(a)', 'fts4(a)', 'rtree(id, x0, x1)']) {
      try {
        withDb(driver, path, (db) => db.exec(`CREATE VIRTUAL TABLE extra USING ${module};`));
        made = true;
        break;
      } catch {
        // not compiled into this SQLite
      }
    }
    if (!made) return t.skip(`${driver.name} has none of fts5, fts4, rtree`);
    await assert.rejects(backend.openReader(path, {}), corrupt(/defines the virtual table "extra"/));
  });

  test('a generated VLink column, a missing column or a missing table → CORRUPT_FILE naming it', async () => {
    const generated = await good('generated.vdb');
    withDb(driver, generated, (db) =>
      db.exec("ALTER TABLE VLinkUrls DROP COLUMN ser; ALTER TABLE VLinkUrls ADD COLUMN ser TEXT AS (url || '!');"),
    );
    await assert.rejects(backend.openReader(generated, {}), corrupt(/VLinkUrls\.ser is a generated column/));
    const missingColumn = await good('column.vdb');
    withDb(driver, missingColumn, (db) => db.exec('ALTER TABLE VLinkDatas DROP COLUMN action;'));
    await assert.rejects(backend.openReader(missingColumn, {}), corrupt(/table VLinkDatas has no column action/));
    const missingTable = await good('table.vdb');
    withDb(driver, missingTable, (db) => db.exec('DROP TABLE VLinkUrls;'));
    await assert.rejects(backend.openReader(missingTable, {}), corrupt(/no table VLinkUrls/));
  });

  test('an index named idx_elapsed_url over other columns is not trusted for the read order', async () => {
    const path = await good('index.vdb');
    withDb(driver, path, (db) =>
      db.exec('DROP INDEX idx_elapsed_url; CREATE INDEX idx_elapsed_url ON VLinkDatas(url);'),
    );
    const facts = withDb(driver, path, (db) => readFacts(db, path), true);
    assert.deepEqual([facts.hasElapsedIndex, facts.hasUrlIndex], [false, false]);
    const partial = await good('partial.vdb');
    withDb(driver, partial, (db) =>
      db.exec('DROP INDEX idx_elapsed_url; CREATE INDEX idx_elapsed_url ON VLinkDatas(elapsed, url) WHERE url = 0;'),
    );
    assert.equal(withDb(driver, partial, (db) => readFacts(db, partial), true).hasElapsedIndex, false);
    const real = await good('real.vdb');
    assert.equal(withDb(driver, real, (db) => readFacts(db, real), true).hasElapsedIndex, true);
    // Still readable, in rowid order.
    const reader = VdbReader.open(driver, path);
    try {
      assert.equal([...reader.frames()].length, 50);
    } finally {
      reader.close();
    }
  });

  test('a FIFO as the .vdb or as its journal is refused before SQLite opens it', async (t) => {
    const fifo = tmp.path('fifo.vdb');
    if (spawnSync('mkfifo', [fifo]).status !== 0) return t.skip('mkfifo is missing');
    await assert.rejects(
      backend.openReader(fifo, {}),
      (e: unknown) => BagError.isInstance(e) && /FIFO/.test(e.message),
    );
    assert.throws(
      () => VdbReader.open(driver, fifo),
      (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT',
    );
    assert.throws(
      () => tagVdb(driver, fifo, 'x'),
      (e: unknown) => BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT',
    );
    const withJournal = await good('journal.vdb');
    spawnSync('mkfifo', [`${withJournal}-journal`]);
    await assert.rejects(backend.openReader(withJournal, {}), corrupt(/sidecar is a FIFO/));
  });

  test('confineTo: the .vdb and its journal must resolve inside the directory', async () => {
    const served = join(tmp.dir, 'served');
    mkdirSync(served);
    const path = join(served, 'bag.vdb');
    renameSync(await good('confined.vdb'), path);
    const planted = tmp.path('planted-journal');
    writeFileSync(planted, new Uint8Array(512));
    symlinkSync(planted, `${path}-journal`);
    await assert.rejects(backend.openReader(path, { confineTo: served }), corrupt(/sidecar resolves outside/));
    rmSync(`${path}-journal`);
    await backend.openReader(path, { confineTo: served }).then((r) => r.close());
    const link = join(served, 'link.vdb');
    symlinkSync(await good('elsewhere.vdb'), link);
    await assert.rejects(
      backend.openReader(link, { confineTo: served }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND' && /resolves outside/.test(e.message),
    );
  });
});
