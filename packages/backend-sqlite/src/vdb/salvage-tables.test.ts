import assert from 'node:assert/strict';
import { closeSync, openSync, statSync, writeSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { loadDriver } from '../driver/driver.js';
import { salvageSqliteTables } from './salvage-tables.js';
import { tempDir } from '../testing/util.js';

// The table salvage other formats' SQLite files use (a rosbag2 sqlite3 storage): every row SQLite reaches, past damage,
// into a copy whose tables are built from the columns, never from the file's own SQL.

const driver = await loadDriver();
const tmp = tempDir('salvage-tables');
after(() => tmp.cleanup());
const ROWS = 4000;

/** A file with a table of many pages (a time past 2^53, a blob), an odd table name, and a WITHOUT ROWID table. */
function makeFile(): string {
  const path = tmp.path('source.db');
  const db = driver.open(path);
  db.exec(`
    CREATE TABLE messages (id INTEGER PRIMARY KEY, t INTEGER NOT NULL, data BLOB NOT NULL);
    CREATE TABLE "odd ""name""" (k TEXT, v REAL);
    CREATE TABLE keyed (k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
    CREATE VIEW every_message AS SELECT * FROM messages;
    BEGIN;`);
  // In SQL: a time past 2^53 cannot cross every driver as a number (Deno's node:sqlite refuses it).
  const insert = db.prepare('INSERT INTO messages (t, data) VALUES (1700000000123456789 + ?, ?)');
  for (let i = 0; i < ROWS; i++) insert.run(i * 1001, new Uint8Array(200).fill(i & 255));
  db.exec(`INSERT INTO "odd ""name""" VALUES ('a', 1.5); INSERT INTO keyed VALUES ('x', 1); COMMIT;`);
  db.close();
  return path;
}

const text = (db: ReturnType<typeof driver.open>, sql: string) =>
  db
    .prepare(sql)
    .all()
    .map((row) => Object.values(row).map(String).join(' '));

describe('salvageSqliteTables', () => {
  test('an undamaged file: every row of every rowid table, integers past 2^53 exact; a WITHOUT ROWID table said', () => {
    const source = makeFile();
    const target = tmp.path('copy.db');
    const result = salvageSqliteTables(driver, source, target);
    assert.deepEqual(
      result.tables.map((t) => [t.name, t.rows, t.skipped, t.refused]),
      [
        ['messages', ROWS, 0, 0],
        ['odd "name"', 1, 0, 0],
        ['keyed', 0, 0, 0],
      ],
    );
    assert.equal(result.unreadable.length, 1);
    assert.match(result.unreadable[0]!, /^keyed: /);
    const a = driver.open(source, { readOnly: true });
    const b = driver.open(target, { readOnly: true });
    try {
      const rows = 'SELECT id, CAST(t AS TEXT), typeof(t), hex(data) FROM messages WHERE id % 97 = 1 ORDER BY id';
      assert.deepEqual(text(b, rows), text(a, rows));
      assert.deepEqual(text(b, `SELECT * FROM "odd ""name"""`), ['a 1.5']);
      // Views (and indexes, triggers) are not taken over: only the tables' rows.
      assert.deepEqual(text(b, "SELECT name FROM sqlite_master WHERE type = 'view'"), []);
    } finally {
      a.close();
      b.close();
    }
  });

  test('a damaged page: the rows around it, the loss counted; rows `accept` refuses left out and counted', () => {
    const source = makeFile();
    const size = statSync(source).size;
    const fd = openSync(source, 'r+');
    writeSync(fd, new Uint8Array(4096).fill(0x5a), 0, 4096, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const target = tmp.path('copy.db');
    let asked = 0;
    const result = salvageSqliteTables(driver, source, target, {
      accept: (table, row) => {
        if (table === 'messages') asked++;
        return table !== 'messages' || Number(row['id']) % 1000 !== 7;
      },
      finish: (db) => db.exec('CREATE INDEX t_idx ON messages (t);'),
    });
    const messages = result.tables.find((t) => t.name === 'messages')!;
    assert.ok(messages.rows > ROWS / 3 && messages.rows < ROWS, `${messages.rows} rows`);
    assert.ok(messages.refused >= 1, 'the rows `accept` refused are counted');
    assert.equal(messages.rows + messages.refused, asked);
    assert.ok(
      result.problems.some((p) => /^messages after row \d+: /.test(p)),
      result.problems.join('\n'),
    );
    const b = driver.open(target, { readOnly: true });
    try {
      assert.equal(Number(b.prepare('SELECT COUNT(*) AS n FROM messages').get()!['n']), messages.rows);
      assert.equal(text(b, "SELECT name FROM sqlite_master WHERE type = 'index'").join(), 't_idx');
    } finally {
      b.close();
    }
  });

  test('a generated column is neither read nor copied: its expression never runs', () => {
    const source = tmp.path('generated.db');
    const db = driver.open(source);
    // An expression that fails on every row it is evaluated for (added after the rows: an insert evaluates it).
    db.exec(`CREATE TABLE g (a INTEGER); INSERT INTO g (a) VALUES (1), (2);
      ALTER TABLE g ADD COLUMN b TEXT GENERATED ALWAYS AS (json_extract('not json', '$')) VIRTUAL;`);
    assert.throws(() => db.prepare('SELECT * FROM g').all(), /malformed JSON/);
    db.close();
    const target = tmp.path('copy.db');
    const result = salvageSqliteTables(driver, source, target);
    assert.deepEqual(result.tables, [{ name: 'g', rows: 2, skipped: 0, refused: 0 }]);
    const b = driver.open(target, { readOnly: true });
    try {
      assert.deepEqual(text(b, 'SELECT * FROM g ORDER BY a'), ['1', '2']);
    } finally {
      b.close();
    }
  });

  test('a file whose schema does not read: CORRUPT_FILE', () => {
    const source = makeFile();
    const fd = openSync(source, 'r+');
    writeSync(fd, new Uint8Array(3000).fill(0x5a), 0, 3000, 100);
    closeSync(fd);
    assert.throws(
      () => salvageSqliteTables(driver, source, tmp.path('copy.db')),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE',
    );
  });
});
