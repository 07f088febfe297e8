import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, truncateSync, writeSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { loadDriver, type SqliteConnection } from '../driver/driver.js';
import { salvageSqliteTables } from './salvage-tables.js';
import { tempDir } from '../testing/util.js';

// A damaged interior page of a table's b-tree cut every row under it off from SQLite, and the salvage lost them all
// (the root of a rosbag2 storage's messages zeroed: 0 of 3,091 read). The salvage now reads the leaf pages no b-tree
// reaches, as `sqlite3 .recover` does, and hands their rows to the walk in the gaps it steps over. These tests check
// the decoding of every kind of value, that freed pages (deleted rows) are never taken for cut-off ones, and that a
// cut file gives no row the cut reached into.

const driver = await loadDriver();
const tmp = tempDir('orphan-rows');
after(() => tmp.cleanup());
const ROWS = 3000;

/** Integers of every record width (1 to 8 bytes, the constants 0 and 1), past 2^53 too, and a real. */
const INTEGERS = [
  '0',
  '1',
  '-1',
  '127',
  '-129',
  '32767',
  '40000',
  '8388609',
  '2147483653',
  '1099511627783',
  '140737488355331',
  '-140737488355331',
  '9007199254740993',
  '-9223372036854775808',
  '9223372036854775807',
  '1.5',
];

/** Rows of every kind of value: text with multi-byte characters, NULLs, empty blobs, and blobs that overflow. */
function makeFile(name: string, prepare = ''): string {
  const path = tmp.path(name);
  const db = driver.open(path);
  db.exec(`PRAGMA secure_delete = OFF; ${prepare}
    CREATE TABLE t (id INTEGER PRIMARY KEY, i INTEGER, r REAL, s TEXT, b BLOB, n NUMERIC);
    CREATE TABLE other (k TEXT, v TEXT);
    INSERT INTO other VALUES ('a', 'b');
    BEGIN;`);
  // In SQL: integers past 2^53 cannot cross every driver as numbers (Deno's node:sqlite refuses them).
  const insert = db.prepare(
    `INSERT INTO t (i, r, s, b, n) VALUES (CASE WHEN ? = '1.5' THEN 1.5 ELSE CAST(? AS INTEGER) END, ?, ?, ?, ?)`,
  );
  for (let k = 1; k <= ROWS; k++) {
    const integer = INTEGERS[k % INTEGERS.length]!;
    const blob = k % 250 === 0 ? new Uint8Array(20_000).map((_, j) => (j * 7 + k) & 255) : new Uint8Array(k % 40);
    // Reals with integer values too: a record stores those as integers.
    insert.run(
      integer,
      integer,
      k % 3 === 0 ? k : k * 0.25,
      `é✓ row ${k}`,
      k % 11 === 0 ? null : blob,
      k % 5 ? k : 'x',
    );
  }
  db.exec('COMMIT;');
  db.close();
  return path;
}

const rootOf = (path: string, table: string) => {
  const db = driver.open(path, { readOnly: true });
  try {
    return Number(db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(table)!['rootpage']);
  } finally {
    db.close();
  }
};

function zeroPage(path: string, page: number): void {
  const pageSize = readFileSync(path).readUInt16BE(16);
  const fd = openSync(path, 'r+');
  writeSync(fd, new Uint8Array(pageSize), 0, pageSize, (page - 1) * pageSize);
  closeSync(fd);
}

/** Every row of `t`, each value with its type, exact (integers as text, reals quoted, blobs in hex). */
function rowsOf(path: string, where = ''): string[] {
  const db: SqliteConnection = driver.open(path, { readOnly: true });
  try {
    return db
      .prepare(
        `SELECT id, typeof(i) || ' ' || CAST(i AS TEXT) || ' ' || quote(r) || ' ' || s || ' ' || typeof(b) || ' ' || hex(b) || ' ' || quote(n) AS v FROM t ${where} ORDER BY id`,
      )
      .all()
      .map((row) => `${String(row['id'])} ${String(row['v'])}`);
  } finally {
    db.close();
  }
}

/** Pages of the free-page list that still read as table leaves (their deleted rows left in place). */
function stalePages(bytes: Buffer): number {
  const pageSize = bytes.readUInt16BE(16);
  const offset = (page: number) => (page - 1) * pageSize;
  let stale = 0;
  for (let trunk = bytes.readUInt32BE(32); trunk !== 0; trunk = bytes.readUInt32BE(offset(trunk))) {
    const leaves = bytes.readUInt32BE(offset(trunk) + 4);
    for (let i = 0; i < leaves; i++) if (bytes[offset(bytes.readUInt32BE(offset(trunk) + 8 + 4 * i))] === 13) stale++;
  }
  return stale;
}

describe('rows of pages no b-tree reaches (a damaged interior page)', () => {
  test("the table's root zeroed: every row read back exact, every kind of value, overflow pages included", () => {
    const source = makeFile('root.db');
    const expected = rowsOf(source);
    assert.equal(expected.length, ROWS);
    zeroPage(source, rootOf(source, 't'));
    const target = tmp.path('copy.db');
    const result = salvageSqliteTables(driver, source, target);
    const t = result.tables.find((x) => x.name === 't')!;
    assert.deepEqual([t.rows, t.skipped, t.refused], [ROWS, 0, 0], result.problems.join('\n'));
    assert.deepEqual(rowsOf(target), expected);
    assert.ok(
      result.problems.includes(`t: ${ROWS} rows read from pages its b-tree no longer reaches`),
      result.problems.join('\n'),
    );
    // The other table's rows are its own, not taken for rows of `t`.
    const b = driver.open(target, { readOnly: true });
    try {
      assert.deepEqual(
        b
          .prepare('SELECT k, v FROM other')
          .all()
          .map((row) => ({ ...row })),
        [{ k: 'a', v: 'b' }],
      );
    } finally {
      b.close();
    }
  });

  test('a child pointer of the root that leads to another leaf: the leaf no longer reached is read, the other once', () => {
    const source = makeFile('pointer.db');
    const expected = rowsOf(source);
    const bytes = readFileSync(source);
    const pageSize = bytes.readUInt16BE(16);
    const root = (rootOf(source, 't') - 1) * pageSize;
    assert.equal(bytes[root], 5, 'the root is an interior page');
    const child = (i: number) => root + bytes.readUInt16BE(root + 12 + 2 * i);
    // Cell 3 of the root now points at cell 5's child: SQLite reads that leaf twice and cell 3's leaf never.
    const fd = openSync(source, 'r+');
    writeSync(fd, bytes.subarray(child(5), child(5) + 4), 0, 4, child(3));
    closeSync(fd);
    const target = tmp.path('copy.db');
    const result = salvageSqliteTables(driver, source, target);
    assert.deepEqual(rowsOf(target), expected, result.problems.join('\n'));
  });

  test('two cut-off pages that hold the same rowids (a page copied over another): neither is taken, every other is', () => {
    const source = makeFile('overlap.db');
    const expected = rowsOf(source);
    zeroPage(source, rootOf(source, 't'));
    const bytes = readFileSync(source);
    const pageSize = bytes.readUInt16BE(16);
    // Two leaves of `t` in the middle of the file (no overflow page between them and no other table's).
    const leaves: number[] = [];
    for (let page = Math.floor(bytes.length / pageSize / 2); leaves.length < 2; page++)
      if (bytes[(page - 1) * pageSize] === 13 && bytes.readUInt16BE((page - 1) * pageSize + 3) > 5) leaves.push(page);
    const [a, b] = leaves as [number, number];
    // A cell: its payload size, then its rowid, each a varint (7 bits a byte, high bit: more).
    const varint = (at: number): [number, number] => {
      let value = 0;
      let i = 0;
      for (; bytes[at + i]! >= 128; i++) value = value * 128 + (bytes[at + i]! - 128);
      return [value * 128 + bytes[at + i]!, i + 1];
    };
    const rowidsOf = (page: number) => {
      const at = (page - 1) * pageSize;
      return Array.from({ length: bytes.readUInt16BE(at + 3) }, (_, i) => {
        const cell = at + bytes.readUInt16BE(at + 8 + 2 * i);
        return varint(cell + varint(cell)[1])[0];
      });
    };
    const lost = new Set([...rowidsOf(a), ...rowidsOf(b)]);
    const fd = openSync(source, 'r+');
    writeSync(fd, bytes.subarray((a - 1) * pageSize, a * pageSize), 0, pageSize, (b - 1) * pageSize);
    closeSync(fd);
    const target = tmp.path('copy.db');
    const result = salvageSqliteTables(driver, source, target);
    assert.deepEqual(
      rowsOf(target),
      expected.filter((row) => !lost.has(Number(row.split(' ')[0]))),
      result.problems.join('\n'),
    );
    assert.ok(
      result.problems.includes('t: 2 pages no b-tree reaches hold rowids another such page holds: left out'),
      result.problems.join('\n'),
    );
  });

  test('deleted rows (pages on the free-page list) are never taken; a free-page list that does not read: none is', () => {
    const source = makeFile('deleted.db');
    const db = driver.open(source);
    db.exec('PRAGMA secure_delete = OFF; DELETE FROM t WHERE id <= 1000;');
    db.close();
    const kept = rowsOf(source);
    assert.equal(kept.length, ROWS - 1000);
    const bytes = readFileSync(source);
    assert.ok(stalePages(bytes) > 0, 'freed pages that still hold the deleted rows');
    zeroPage(source, rootOf(source, 't'));
    const target = tmp.path('copy.db');
    const result = salvageSqliteTables(driver, source, target);
    assert.deepEqual(rowsOf(target), kept, result.problems.join('\n'));

    // The free-page list's count made wrong: freed pages cannot be told from cut-off ones, so none is taken.
    const fd = openSync(source, 'r+');
    const count = Buffer.alloc(4);
    count.writeUInt32BE(bytes.readUInt32BE(36) + 1);
    writeSync(fd, count, 0, 4, 36);
    closeSync(fd);
    const second = salvageSqliteTables(driver, source, tmp.path('copy.db'));
    assert.equal(second.tables.find((x) => x.name === 't')!.rows, 0);
    assert.ok(
      second.problems.some((p) =>
        /free-page list does not read whole, so they cannot be told from freed pages/.test(p),
      ),
      second.problems.join('\n'),
    );
  });

  test('a cut file: rows of cut-off pages that lie wholly before the cut, exact; none the cut reached into', () => {
    const source = makeFile('cut.db');
    const expected = new Set(rowsOf(source));
    zeroPage(source, rootOf(source, 't'));
    // Cut through the lowest cell of a leaf page past the middle: its first bytes are there, its text is not (a
    // page's cells are laid out from its end, so every other cell of the page lies past the cut).
    const bytes = readFileSync(source);
    const pageSize = bytes.readUInt16BE(16);
    let cut = 0;
    let cutRowid = 0;
    for (let page = Math.floor(bytes.length / pageSize / 2); cut === 0; page++) {
      const at = (page - 1) * pageSize;
      const cells = bytes.readUInt16BE(at + 3);
      if (bytes[at] !== 13 || cells < 5) continue;
      const lowest = Math.min(...Array.from({ length: cells }, (_, i) => bytes.readUInt16BE(at + 8 + 2 * i)));
      // The cell: its payload size (one byte: under 128), then its rowid (two bytes: 128 to 16,383).
      assert.ok(bytes[at + lowest]! < 128 && bytes[at + lowest + 1]! >= 128 && bytes[at + lowest + 2]! < 128);
      cutRowid = (bytes[at + lowest + 1]! - 128) * 128 + bytes[at + lowest + 2]!;
      cut = at + lowest + 20;
    }
    truncateSync(source, cut);
    const target = tmp.path('copy.db');
    salvageSqliteTables(driver, source, target);
    const copied = rowsOf(target);
    assert.ok(copied.length > ROWS / 3 && copied.length < ROWS, `${copied.length} rows`);
    for (const row of copied) assert.ok(expected.has(row), `a row the file did not hold: ${row.slice(0, 80)}`);
    assert.ok(!copied.some((row) => row.startsWith(`${cutRowid} `)), `row ${cutRowid}, which the cut went through`);
  });

  test('pages whose rows fit two tables alike go to neither', () => {
    const path = tmp.path('twins.db');
    const db = driver.open(path);
    db.exec('CREATE TABLE a (x INTEGER, y BLOB); CREATE TABLE b (x INTEGER, y BLOB); BEGIN;');
    for (const table of ['a', 'b']) {
      const insert = db.prepare(`INSERT INTO ${table} VALUES (?, ?)`);
      for (let k = 0; k < 1000; k++) insert.run(k, new Uint8Array(50).fill(k & 255));
    }
    db.exec('COMMIT;');
    db.close();
    zeroPage(path, rootOf(path, 'a'));
    const result = salvageSqliteTables(driver, path, tmp.path('copy.db'));
    assert.deepEqual(
      result.tables.map((t) => [t.name, t.rows]),
      [
        ['a', 0],
        ['b', 1000],
      ],
    );
    assert.ok(
      result.problems.some((p) => /pages no b-tree reaches hold rows of no one table read here: left out/.test(p)),
      result.problems.join('\n'),
    );
  });
});
