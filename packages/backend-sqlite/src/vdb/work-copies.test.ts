import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { loadDriver } from '../driver/driver.js';
import { salvageSqliteTables } from './salvage-tables.js';
import { WorkCopies } from './salvage-rows.js';
import { tempDir } from '../testing/util.js';

// What a salvage reads a damaged file through: the file itself when SQLite can read it as it is, a private copy only
// when something has to be written to read it (a journal to roll back, WAL mode, a cut to pad). Every salvage used to
// copy the file first, so repairing a damaged file took its size again in free space even where nothing needed it.

const driver = await loadDriver();
const tmp = tempDir('work-copies');
after(() => tmp.cleanup());

function makeFile(): string {
  const path = tmp.path('source.db');
  const db = driver.open(path);
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, data BLOB); BEGIN;');
  const insert = db.prepare('INSERT INTO t (data) VALUES (?)');
  for (let i = 0; i < 2000; i++) insert.run(new Uint8Array(100).fill(i & 255));
  db.exec('COMMIT;');
  db.close();
  return path;
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const siblings = (path: string) => ['-journal', '-wal', '-shm'].filter((suffix) => existsSync(path + suffix));

describe('WorkCopies', () => {
  test('a file with a damaged page, whole and without a journal, is read in place and left as it was', () => {
    const source = makeFile();
    const fd = openSync(source, 'r+');
    writeSync(fd, new Uint8Array(4096), 0, 4096, Math.floor(statSync(source).size / 2 / 4096) * 4096);
    closeSync(fd);
    const before = digest(source);
    const target = tmp.path('copy.db');
    const copies = new WorkCopies(driver, source, target, () => {});
    assert.equal(copies.work, source);
    assert.equal(existsSync(`${target}.source`), false, 'no copy made');
    copies.remove();
    assert.ok(existsSync(source));
    const result = salvageSqliteTables(driver, source, target);
    assert.ok(result.tables[0]!.rows > 1000 && result.tables[0]!.rows < 2000, `${result.tables[0]!.rows} rows`);
    assert.equal(digest(source), before);
    assert.deepEqual(siblings(source), [], 'nothing made beside it');
  });

  test('a cut file, a file with a -wal to replay, a file in WAL mode: read from private copies, which remove() deletes', () => {
    const cut = makeFile();
    truncateSync(cut, statSync(cut).size - 5000);
    // A WAL-mode writer that crashed: its committed transactions still in the -wal beside the file.
    const crashed = makeFile();
    const db = driver.open(crashed);
    db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;');
    db.exec('INSERT INTO t (data) SELECT data FROM t;');
    const withWal = tmp.path('with-wal.db');
    copyFileSync(crashed, withWal);
    copyFileSync(`${crashed}-wal`, `${withWal}-wal`);
    db.close();
    // In WAL mode (the header's read and write versions 2) without its -wal: a read-only open would need a -shm.
    const walMode = makeFile();
    const fd = openSync(walMode, 'r+');
    writeSync(fd, new Uint8Array([2, 2]), 0, 2, 18);
    closeSync(fd);
    for (const [what, source] of [
      ['cut', cut],
      ['-wal', withWal],
      ['WAL mode', walMode],
    ] as const) {
      const before = digest(source);
      const target = tmp.path('copy.db');
      const copies = new WorkCopies(driver, source, target, () => {});
      assert.equal(copies.work, `${target}.source`, what);
      assert.ok(existsSync(copies.work), what);
      copies.remove();
      assert.equal(existsSync(copies.work), false, what);
      assert.deepEqual(siblings(copies.work), [], what);
      assert.equal(digest(source), before, what);
    }
  });
});
