import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { tempDir } from './util.js';
import { loadNamedDriver, type DriverName, type SqliteDriver } from '../driver/driver.js';

/**
 * The behaviour every driver adapter must share (db0's idea: one suite, a few lines per driver). Each driver's test
 * file calls this; a driver the current runtime lacks is reported as skipped.
 */
export async function runDriverSuite(name: DriverName): Promise<void> {
  let driver: SqliteDriver | undefined;
  let reason = '';
  try {
    driver = await loadNamedDriver(name);
  } catch (error) {
    reason = `${name} is not available in this runtime`;
    assert.equal((error as { code?: string }).code, 'DRIVER_MISSING');
  }
  if (!driver) {
    test(`driver ${name}`, { skip: reason }, () => {});
    return;
  }
  const d = driver;
  describe(`driver ${name}`, () => {
    const tmp = tempDir(name.replace(':', '-'));
    after(() => tmp.cleanup());

    test('reports its name', () => {
      assert.equal(d.name, name);
      const db = d.open(':memory:');
      assert.equal(db.driver, name);
      db.close();
    });

    test('exec runs several statements; prepare binds positional params', () => {
      const db = d.open(tmp.path('a.db'));
      try {
        db.exec('CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB); CREATE INDEX ti ON t(i);');
        const ins = db.prepare('INSERT INTO t (i, r, s, b) VALUES (?, ?, ?, ?)');
        const res = ins.run(1, 0.5, 'x', new Uint8Array([1, 2, 3]));
        assert.equal(Number(res.changes), 1);
        assert.equal(Number(res.lastInsertRowid), 1);
        ins.run(2, 1.5, 'y', null);
        const rows = db.prepare('SELECT i, r, s, b FROM t ORDER BY i').all();
        assert.equal(rows.length, 2);
        assert.equal(rows[0]!['i'], 1);
        assert.equal(rows[0]!['r'], 0.5);
        assert.equal(rows[0]!['s'], 'x');
        assert.ok(rows[0]!['b'] instanceof Uint8Array);
        assert.deepEqual([...(rows[0]!['b'] as Uint8Array)], [1, 2, 3]);
        assert.equal(rows[1]!['b'], null);
        assert.equal(db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'ti'").get()!['n'], 1);
      } finally {
        db.close();
      }
    });

    test('get returns undefined when there is no row', () => {
      const db = d.open(':memory:');
      db.exec('CREATE TABLE t(i INTEGER)');
      assert.equal(db.prepare('SELECT i FROM t').get(), undefined);
      db.close();
    });

    test('blobs: Uint8Array views bind their own bytes; empty blobs survive', () => {
      const db = d.open(':memory:');
      db.exec('CREATE TABLE t(b BLOB)');
      const ins = db.prepare('INSERT INTO t (b) VALUES (?)');
      const backing = new Uint8Array([9, 9, 1, 2, 3, 9]);
      ins.run(backing.subarray(2, 5));
      ins.run(new Uint8Array(0));
      const rows = db.prepare('SELECT b, typeof(b) AS t, length(b) AS n FROM t ORDER BY rowid').all();
      assert.deepEqual([...(rows[0]!['b'] as Uint8Array)], [1, 2, 3]);
      assert.equal(rows[0]!['t'], 'blob');
      assert.equal(rows[1]!['n'], 0);
      const empty = rows[1]!['b'];
      assert.ok(empty === null || (empty instanceof Uint8Array && empty.length === 0));
      db.close();
    });

    test('64-bit integers read back as numbers and bind as INTEGER through column affinity', () => {
      const db = d.open(':memory:');
      db.exec('CREATE TABLE t(i INTEGER)');
      db.prepare('INSERT INTO t (i) VALUES (?)').run(5_000_000_000);
      db.prepare('INSERT INTO t (i) VALUES (?)').run(549_755_813_888);
      const rows = db.prepare('SELECT i, typeof(i) AS t FROM t ORDER BY rowid').all();
      assert.equal(rows[0]!['i'], 5_000_000_000);
      assert.equal(rows[0]!['t'], 'integer');
      assert.equal(rows[1]!['i'], 549_755_813_888);
      assert.equal(db.prepare('SELECT 1773712800123 AS v').get()!['v'], 1_773_712_800_123);
      db.close();
    });

    test('iterate streams rows and frees the connection on early return', () => {
      const db = d.open(':memory:');
      db.exec('CREATE TABLE t(i INTEGER)');
      const ins = db.prepare('INSERT INTO t (i) VALUES (?)');
      for (let i = 0; i < 100; i++) ins.run(i);
      const seen: number[] = [];
      for (const row of db.prepare('SELECT i FROM t WHERE i >= ? ORDER BY i').iterate(90))
        seen.push(row['i'] as number);
      assert.deepEqual(seen, [90, 91, 92, 93, 94, 95, 96, 97, 98, 99]);
      for (const row of db.prepare('SELECT i FROM t ORDER BY i').iterate()) {
        if ((row['i'] as number) >= 3) break;
      }
      ins.run(100); // the connection is usable again after break
      assert.equal(db.prepare('SELECT COUNT(*) AS n FROM t').get()!['n'], 101);
      db.close();
    });

    test('transactions: BEGIN / COMMIT / ROLLBACK through exec', () => {
      const db = d.open(':memory:');
      db.exec('CREATE TABLE t(i INTEGER)');
      const ins = db.prepare('INSERT INTO t (i) VALUES (?)');
      db.exec('BEGIN;');
      ins.run(1);
      db.exec('COMMIT;');
      db.exec('BEGIN;');
      ins.run(2);
      db.exec('ROLLBACK;');
      assert.equal(db.prepare('SELECT COUNT(*) AS n FROM t').get()!['n'], 1);
      db.close();
    });

    test('readOnly: a missing file fails to open, writes fail, reads work', () => {
      assert.throws(() => d.open(tmp.path('missing.db'), { readOnly: true }));
      const path = tmp.path('ro.db');
      const w = d.open(path);
      w.exec('CREATE TABLE t(i INTEGER); INSERT INTO t VALUES (7);');
      w.close();
      const r = d.open(path, { readOnly: true });
      try {
        assert.equal(r.prepare('SELECT i FROM t').get()!['i'], 7);
        assert.throws(() => r.exec('INSERT INTO t VALUES (8)'));
      } finally {
        r.close();
      }
    });

    test('immutable: a WAL-mode file opens without a -shm or -wal beside it, or the driver refuses by name', async () => {
      const { mkdirSync, readdirSync } = await import('node:fs');
      const { join } = await import('node:path');
      const folder = tmp.path('immutable folder #%?');
      mkdirSync(folder);
      const path = join(folder, 'wal.db');
      const w = d.open(path);
      w.exec('PRAGMA journal_mode = WAL; CREATE TABLE t(i INTEGER); INSERT INTO t VALUES (7);');
      w.close();
      const open = () => d.open(path, { readOnly: true, immutable: true });
      if (name === 'better-sqlite3') {
        assert.throws(open, (e: { code?: string }) => e.code === 'NOT_SUPPORTED');
        return;
      }
      const r = open();
      try {
        assert.equal(r.prepare('SELECT i FROM t').get()!['i'], 7);
        assert.throws(() => r.exec('INSERT INTO t VALUES (8)'));
      } finally {
        r.close();
      }
      assert.deepEqual(readdirSync(folder), ['wal.db']);
    });

    test('close releases an EXCLUSIVE lock even with prepared statements outstanding', () => {
      const path = tmp.path('lock.db');
      const w = d.open(path);
      w.exec('PRAGMA journal_mode = OFF; PRAGMA locking_mode = EXCLUSIVE; CREATE TABLE t(i INTEGER);');
      const ins = w.prepare('INSERT INTO t (i) VALUES (?)');
      w.exec('BEGIN;');
      ins.run(1);
      w.exec('COMMIT;');
      w.prepare('SELECT i FROM t').get();
      w.close();
      const r = d.open(path, { readOnly: true });
      assert.equal(r.prepare('SELECT COUNT(*) AS n FROM t').get()!['n'], 1);
      r.close();
    });

    test('a read-only connection is hardened: query_only, trusted_schema off, defensive where the driver has it', () => {
      const path = tmp.path('hardened.db');
      const w = d.open(path);
      w.exec('CREATE TABLE t(i INTEGER);');
      const plain = [
        w.prepare('PRAGMA query_only').get()!['query_only'],
        w.prepare('PRAGMA trusted_schema').get()!['trusted_schema'],
      ];
      w.close();
      assert.deepEqual(plain.map(Number), [0, 1], 'a read-write connection is left as SQLite opens it');
      const r = d.open(path, { readOnly: true });
      try {
        assert.equal(Number(r.prepare('PRAGMA query_only').get()!['query_only']), 1);
        assert.equal(Number(r.prepare('PRAGMA trusted_schema').get()!['trusted_schema']), 0);
        // better-sqlite3 always has it; node:sqlite where it offers enableDefensive; bun:sqlite has no switch.
        const expected = name === 'better-sqlite3' ? true : name === 'bun:sqlite' ? false : r.defensive;
        assert.equal(r.defensive, expected);
        if (r.defensive) assert.throws(() => r.exec('PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = 1;'));
      } finally {
        r.close();
      }
    });

    test('a file that is not a database fails with SQLite’s NOTADB error', async () => {
      const { writeFileSync } = await import('node:fs');
      const path = tmp.path('garbage.db');
      writeFileSync(path, 'this is not a database '.repeat(200));
      assert.throws(() => {
        const db = d.open(path, { readOnly: true });
        try {
          db.prepare('SELECT * FROM sqlite_master').all();
        } finally {
          db.close();
        }
      }, /not a database/);
    });
  });
}
