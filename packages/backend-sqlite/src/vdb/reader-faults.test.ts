import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, CompressType, SchemaType, type Frame, type WriterConfig } from '@vlink/bag-core';
import { loadDriver } from '../driver/driver.js';
import { pattern, tempDir, withDb } from '../testing/util.js';
import { type Faults, faultyDriver } from './fault-driver.test.helper.js';
import { recordFrames } from './open-writer.test.helper.js';
import { VdbReader } from './reader.js';
import * as SQL from './sql.js';

// The .vdb reader when SQLite fails under it (open, a query, a row), a cursor that met a damaged row, a file whose
// only index is on url, and what verify() says of schema rows. Expected rows come from SQL on the file. Mutation
// testing (group vdb) found these unpinned.
const driver = await loadDriver();
const tmp = tempDir('vdb-reader-faults');
after(() => tmp.cleanup());

function frame(timestamp: number, url: string, data = pattern(16, timestamp)): Frame {
  return { timestamp, url, data, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish };
}

const recorded = (frames: Frame[], config: Partial<WriterConfig> = {}): string =>
  recordFrames(driver, tmp, frames, config).path;

function failsWith(fn: () => unknown, code: string, reason: string, file: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(BagError.isInstance(error), String(error));
    assert.equal(error.code, code);
    assert.equal(error.reason, reason);
    assert.equal(error.file, file);
    return true;
  });
}

const faulty = (faults: Faults) => faultyDriver(driver, faults).driver;
const isFrames = (sql: string) => sql.startsWith(SQL.SELECT_FRAMES);

describe('.vdb reader: SQLite failing under it', () => {
  test('open, the schema query, the frame query and a row read each say what failed (an I/O error, not damage)', () => {
    const path = recorded([frame(1, 'dds://a'), frame(2, 'dds://a')]);
    withDb(driver, path, (db) => db.prepare(SQL.INSERT_SCHEMA).run('pb.A', 'protobuf', Uint8Array.of(1, 2, 3)));
    failsWith(() => VdbReader.open(faulty({ open: () => true }), path), 'IO_ERROR', 'cannot open .vdb file', path);

    let failing = '';
    const reader = VdbReader.open(
      faulty({ prepare: (sql) => sql === failing || (failing === 'frames' && isFrames(sql)) }),
      path,
    );
    failing = SQL.SELECT_SCHEMAS;
    failsWith(() => reader.schemas(), 'CORRUPT_FILE', 'cannot read VLinkSchemas', path);
    failing = 'frames';
    failsWith(() => reader.frames(), 'IO_ERROR', 'cannot query VLinkDatas', path);
    reader.close();

    // The second row's read fails (an I/O error, not damage): thrown, even with tryToFix.
    for (const tryToFix of [false, true]) {
      const rows = VdbReader.open(faulty({ row: (sql, i) => isFrames(sql) && i === 1 }), path, { tryToFix });
      const cursor = rows.frames();
      assert.equal(cursor.next().value?.timestamp, 1);
      failsWith(() => cursor.next(), 'IO_ERROR', 'cannot read VLinkDatas', path);
      assert.equal(rows.damage, undefined);
      rows.close();
    }
  });

  test('a header that cannot be read fails the open as CORRUPT_FILE "cannot read .vdb file"', () => {
    const path = recorded([frame(1, 'dds://a')]);
    const reader = faulty({ prepare: (sql) => sql === SQL.SELECT_HEADER });
    failsWith(() => VdbReader.open(reader, path), 'CORRUPT_FILE', 'cannot read .vdb file', path);
  });
});

describe('.vdb reader: cursors', () => {
  test('a cursor that met a damaged row stays ended: no row after it comes out later', () => {
    const rows = [1, 2, 3].map((t) => frame(t, 'dds://a', pattern(4000, t)));
    const path = recorded(rows, { compress: CompressType.Lzav });
    withDb(driver, path, (db) => {
      const data = db.prepare('SELECT data FROM VLinkDatas WHERE elapsed = 2').get()!['data'] as Uint8Array;
      const broken = Uint8Array.of(...data.subarray(0, 20), ...data.subarray(data.length - 4));
      db.prepare('UPDATE VLinkDatas SET data = ? WHERE elapsed = 2').run(broken);
    });
    for (const tryToFix of [false, true]) {
      const reader = VdbReader.open(driver, path, { tryToFix });
      const cursor = reader.frames();
      assert.deepEqual(cursor.next().value?.data, rows[0]!.data);
      if (tryToFix) assert.equal(cursor.next().done, true);
      else
        assert.throws(
          () => cursor.next(),
          (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_DATA',
        );
      assert.equal(cursor.next().done, true, 'row 3 stays unread');
      reader.close();
    }
  });

  test('an ended cursor stays ended: next() and return() again, and closing the reader twice, change nothing', () => {
    const path = recorded([frame(1, 'dds://a'), frame(2, 'dds://a')]);
    let reads = 0;
    const reader = VdbReader.open(
      faulty({
        row: (sql) => {
          if (isFrames(sql)) reads++;
          return false;
        },
      }),
      path,
    );
    const cursor = reader.frames();
    assert.deepEqual(
      Array.from(cursor, (f) => f.timestamp),
      [1, 2],
    );
    const readsAtEnd = reads;
    assert.equal(cursor.next().done, true);
    assert.equal(cursor.return?.().done, true);
    assert.equal(reads, readsAtEnd, 'no read after the end');
    reader.close();
    reader.close();
  });

  test('without an elapsed index, frames come in rowid order even when the file has an index on url', () => {
    const path = recorded([frame(30, 'dds://b'), frame(10, 'dds://a'), frame(20, 'dds://b'), frame(5, 'dds://a')]);
    withDb(driver, path, (db) => db.exec('DROP INDEX idx_elapsed_url; CREATE INDEX by_url ON VLinkDatas(url);'));
    const expected = withDb(driver, path, (db) =>
      db
        .prepare('SELECT elapsed FROM VLinkDatas ORDER BY rowid')
        .all()
        .map((r) => r['elapsed']),
    );
    const reader = VdbReader.open(driver, path);
    assert.deepEqual(
      Array.from(reader.frames({ urls: ['dds://b', 'dds://a'] }), (f) => f.timestamp),
      expected,
    );
    reader.close();
  });
});

describe('.vdb reader: a damaged elapsed index', () => {
  // Whole pages copied over others (found by hand): SQLite trusts the index for `ORDER BY elapsed`, so what it hands
  // out is what the damaged index says, without an error of its own.
  function damagedIndex(copy: (pages: { root: number; leaves: number[] }) => [from: number, to: number]): string {
    const frames = Array.from({ length: 3000 }, (_, i) => frame(i * 1000, `dds://u${i % 3}`));
    const path = recorded(frames, { compress: CompressType.None });
    const root = Number(
      withDb(
        driver,
        path,
        (db) => db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'idx_elapsed_url';").get(),
        true,
      )!['rootpage'],
    );
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    const leaves: number[] = [];
    for (let page = 2; page <= bytes.length / pageSize; page++)
      if (page !== root && bytes[(page - 1) * pageSize] === 0x0a) leaves.push(page); // index b-tree leaves
    assert.equal(bytes[(root - 1) * pageSize], 0x02, 'an index of more than one page');
    const [from, to] = copy({ root, leaves });
    bytes.copyWithin((to - 1) * pageSize, (from - 1) * pageSize, from * pageSize);
    writeFileSync(path, bytes);
    return path;
  }

  test('a leaf copied over another: CORRUPT_FILE where the times go back, not frames read twice', () => {
    const path = damagedIndex(({ leaves }) => [leaves[0]!, leaves[1]!]);
    const strict = VdbReader.open(driver, path);
    try {
      assert.throws(
        () => [...strict.frames({})],
        (e: unknown) =>
          BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /elapsed index is out of order/.test(e.reason),
      );
    } finally {
      strict.close();
    }
    const tolerant = VdbReader.open(driver, path, { tryToFix: true });
    try {
      const times = [...tolerant.frames({})].map((f) => f.timestamp);
      assert.ok(times.length > 0 && times.length < 3000);
      assert.equal(new Set(times).size, times.length, 'no frame twice');
    } finally {
      tolerant.close();
    }
  });

  test('a leaf copied over the root: a whole read of a closed file fails at its end, short of the header count', () => {
    const path = damagedIndex(({ root, leaves }) => [leaves[0]!, root]);
    const reader = VdbReader.open(driver, path);
    try {
      const frames: Frame[] = [];
      assert.throws(
        () => {
          for (const f of reader.frames({})) frames.push(f);
        },
        (e: unknown) =>
          BagError.isInstance(e) &&
          e.code === 'CORRUPT_FILE' &&
          /VLinkDatas gave \d+ rows, the header counts 3000/.test(e.reason),
      );
      assert.ok(frames.length > 0 && frames.length < 3000, `${frames.length} frames before the error`);
    } finally {
      reader.close();
    }
  });
});

describe('.vdb reader: verify', () => {
  test('a schema row of no known family is a problem verify() reports', async () => {
    const path = recorded([frame(1, 'dds://a')]);
    withDb(driver, path, (db) => db.prepare(SQL.INSERT_SCHEMA).run('pb.A', 'no-such-encoding', Uint8Array.of(1, 2)));
    const reader = VdbReader.open(driver, path);
    const report = await reader.verify({});
    reader.close();
    assert.equal(report.ok, false);
    assert.ok(
      report.problems.some((p) =>
        JSON.stringify(p).includes('schema \\"pb.A\\" has no name, encoding or known family'),
      ),
      JSON.stringify(report.problems),
    );
  });
});
