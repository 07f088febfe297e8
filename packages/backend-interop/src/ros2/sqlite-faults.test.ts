import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader, infoProblems } from '@vlink/bag-core';
import { loadDriver } from '@vlink/bag-sqlite';
import { foreignPath } from '../testing/expected.js';
import { registerAll } from '../testing/register.js';

// A rosbag2 sqlite3 storage read the way a server reads it: closed while a read is still going (a client that went
// away), and with a schema that is not rosbag2's any more (found by the fuzz runs: seed 1212 #24184 and the http-api
// request fuzz).

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-ros2-faults-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('rosbag2 sqlite3 storage faults', () => {
  test('closing the reader in the middle of frames() ends the read (no "connection busy" error)', async () => {
    const reader = await BagReader.create(foreignPath('ros2', 'sqlite3'));
    const frames = reader.frames();
    assert.equal((await frames.next()).done, false);
    reader.close();
    // The storage's query is over: the iterator ends or says the reader is closed, with a typed error.
    await frames.next().then(
      (step) => assert.equal(step.done, true),
      (error: unknown) => assert.ok(BagError.isInstance(error), String(error)),
    );
  });

  test('a messages table without the id column rosbag2 orders by: CORRUPT_FILE, not a driver error', async () => {
    const copy = join(dir, 'no-id');
    cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
    const db = (await loadDriver()).open(join(copy, 'sqlite3.db3'));
    db.exec('ALTER TABLE messages RENAME COLUMN id TO ix');
    db.close();
    const reader = await BagReader.create(copy);
    try {
      await assert.rejects(
        async () => {
          for await (const _ of reader.frames()) {
            // nothing to do: the first step fails
          }
        },
        (e: unknown) =>
          BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /reading the rosbag2 sqlite3 storage/.test(e.message),
      );
    } finally {
      reader.close();
    }
  });

  test('a damaged timestamp index: CORRUPT_FILE, not messages twice or missing', async () => {
    // Found by hand, copying whole pages of a .db3 of 3,048 messages: SQLite trusts timestamp_idx for the order, and an
    // index page over another gave 263 messages twice, over the index's root 263 of 3,048, without an error.
    const copy = join(dir, 'big.db3');
    cpSync(join(foreignPath('ros2', 'sqlite3'), 'sqlite3.db3'), copy);
    const db = (await loadDriver()).open(copy);
    // In SQL: Deno's node:sqlite refuses to hand a nanosecond time to JavaScript as a number.
    const n = Number(db.prepare('SELECT COUNT(*) AS n FROM messages').get()!['n']);
    const insert = db.prepare(
      'INSERT INTO messages(topic_id, timestamp, data) SELECT topic_id, (SELECT MAX(timestamp) FROM messages) + 1000, data FROM messages WHERE id = ?',
    );
    // One transaction: 3,000 commits, each synced, took most of this file's 8 s.
    db.exec('BEGIN;');
    for (let k = 0; k < 3000; k++) insert.run((k % n) + 1);
    db.exec('COMMIT;');
    const root = Number(
      db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'timestamp_idx'").get()!['rootpage'],
    );
    db.close();
    const bytes = readFileSync(copy);
    const pageSize = bytes.readUInt16BE(16);
    assert.equal(bytes[(root - 1) * pageSize], 0x02, 'an index of more than one page');
    const leaves: number[] = [];
    for (let page = 2; page <= bytes.length / pageSize; page++)
      if (page !== root && bytes[(page - 1) * pageSize] === 0x0a) leaves.push(page);
    for (const [from, to, words] of [
      [leaves[0]!, leaves[1]!, /goes back in time: the timestamp index is damaged/],
      [leaves[0]!, root, /gave \d+ messages, the table holds 3\d{3}: the timestamp index is damaged/],
    ] as const) {
      const damaged = join(dir, `index-${from}-${to}.db3`);
      const copyOf = Buffer.from(bytes);
      copyOf.copyWithin((to - 1) * pageSize, (from - 1) * pageSize, from * pageSize);
      writeFileSync(damaged, copyOf);
      const reader = await BagReader.create(damaged);
      try {
        await assert.rejects(
          async () => {
            for await (const _ of reader.frames()) void _;
          },
          (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && words.test(e.message),
        );
      } finally {
        reader.close();
      }
    }
  });

  test('a storage with another file appended: CORRUPT_FILE naming the bytes; tryToFix reads the first', async () => {
    // Found by hand: `cat a.db3 a.db3` read as one storage, complete, without a word of the rest.
    const copy = join(dir, 'appended');
    cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
    const file = join(copy, 'sqlite3.db3');
    const bytes = readFileSync(file);
    writeFileSync(file, Buffer.concat([bytes, bytes]));
    const words = `sqlite3.db3: ${bytes.length} bytes follow the database's last page, which SQLite does not read`;
    await assert.rejects(
      BagReader.create(copy),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && e.message.startsWith(words),
    );
    const reader = await BagReader.create(copy, { tryToFix: true });
    try {
      let n = 0;
      for await (const _ of reader.frames()) n++;
      assert.equal(n, 91);
      const info = reader.getInfo();
      assert.equal(info.hasCompleted, false);
      assert.ok(info.metadata?.find((m) => m.name === 'rosbag2.problems')?.values['0']?.startsWith(words));
    } finally {
      reader.close();
    }
  });

  test('a generated column, a view or a trigger: refused before a query runs it; tryToFix reads the tables only', async () => {
    // Found by hand: three messages whose `data` was `zeroblob(400000000 + x)`, a generated column SQLite evaluates
    // on each row read, took 8 s and 3 GiB to read (and rosbag2 bags are read on the HTTP server's own thread).
    const cases: Array<[string, string, RegExp]> = [
      [
        'generated',
        'ALTER TABLE messages ADD COLUMN huge BLOB GENERATED ALWAYS AS (zeroblob(400000000 + id)) VIRTUAL;',
        /messages\.huge is a generated column/,
      ],
      ['view', 'CREATE VIEW every_message AS SELECT * FROM messages;', /defines the view "every_message"/],
      [
        'trigger',
        'CREATE TRIGGER on_insert AFTER INSERT ON topics BEGIN SELECT 1; END;',
        /defines the trigger "on_insert"/,
      ],
    ];
    for (const [name, sql, words] of cases) {
      const copy = join(dir, `hostile-${name}`);
      cpSync(foreignPath('ros2', 'sqlite3'), copy, { recursive: true });
      const db = (await loadDriver()).open(join(copy, 'sqlite3.db3'));
      db.exec(sql);
      db.close();
      const started = performance.now();
      await assert.rejects(
        BagReader.create(copy),
        (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && words.test(e.message),
      );
      // With tryToFix, the salvage copies the tables' stored columns and nothing else: every message, and why.
      const reader = await BagReader.create(copy, { tryToFix: true });
      try {
        let n = 0;
        for await (const _ of reader.frames()) n++;
        assert.equal(n, 91, name);
        const problems = infoProblems(reader.getInfo());
        assert.ok(problems[0] && words.test(problems[0]), `${name}: ${problems.join('\n')}`);
      } finally {
        reader.close();
      }
      // Nothing evaluated 400 MB per row.
      assert.ok(performance.now() - started < 5000, `${name}: ${Math.round(performance.now() - started)} ms`);
    }
  });
});
