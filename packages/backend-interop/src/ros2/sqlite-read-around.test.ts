import assert from 'node:assert/strict';
import {
  closeSync,
  cpSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test, withOwnTempDir } from '@vlink/fixtures/test';
import { BagError, BagReader, infoProblems, type Frame } from '@vlink/bag-core';
import { loadDriver } from '@vlink/bag-sqlite';
import { foreignPath } from '../testing/expected.js';
import { registerAll } from '../testing/register.js';

// A rosbag2 sqlite3 storage that SQLite finds malformed (a damaged page, a file cut short) was refused, with tryToFix
// too. tryToFix now reads what SQLite can reach of it, row by row past the damage, and says what it lost.

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-ros2-read-around-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ADDED = 3000;

/** The fixture bag with `ADDED` more messages (a storage of many pages), metadata.yaml counting them. */
async function biggerBag(): Promise<{ path: string; total: number }> {
  const path = join(dir, 'whole');
  cpSync(foreignPath('ros2', 'sqlite3'), path, { recursive: true });
  const db = (await loadDriver()).open(join(path, 'sqlite3.db3'));
  const n = Number(db.prepare('SELECT COUNT(*) AS n FROM messages').get()!['n']);
  // In SQL: Deno's node:sqlite refuses to hand a nanosecond time to JavaScript as a number.
  const insert = db.prepare(
    'INSERT INTO messages(topic_id, timestamp, data) SELECT topic_id, (SELECT MAX(timestamp) FROM messages) + 1000, data FROM messages WHERE id = ?',
  );
  db.exec('BEGIN;');
  for (let k = 0; k < ADDED; k++) insert.run((k % n) + 1);
  db.exec('COMMIT;');
  db.exec('PRAGMA wal_checkpoint(TRUNCATE);');
  db.close();
  const yaml = join(path, 'metadata.yaml');
  // The file's count and the bag's (the per-topic counts are left as they were: the reader does not check them).
  writeFileSync(yaml, readFileSync(yaml, 'utf8').replaceAll(`message_count: ${n}\n`, `message_count: ${n + ADDED}\n`));
  return { path, total: n + ADDED };
}

const key = (f: Frame) => `${f.timestamp} ${f.url} ${Buffer.from(f.data).toString('base64')}`;

async function frameKeys(path: string, tryToFix: boolean) {
  const reader = await BagReader.create(path, { tryToFix });
  try {
    const keys: string[] = [];
    for await (const frame of reader.frames()) keys.push(key(frame));
    return { keys, info: reader.getInfo() };
  } finally {
    reader.close();
  }
}

/** The salvage folders in `tmp`: a temporary directory of the test's own (other runtimes' suites share the real one). */
const salvageDirs = (tmp: string) => readdirSync(tmp).filter((name) => name.startsWith('vlink-ros2-salvage-')).length;

/** The bag, its frames as a strict read gives them, and the root page of its messages, made once (by the first test). */
let prepared:
  | Promise<{ whole: { path: string; total: number }; original: { keys: string[] }; root: number }>
  | undefined;
const prepare = () =>
  (prepared ??= (async () => {
    const whole = await biggerBag();
    const db = (await loadDriver()).open(join(whole.path, 'sqlite3.db3'), { readOnly: true });
    let root: number;
    try {
      root = Number(db.prepare("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").get()!['rootpage']);
    } finally {
      db.close();
    }
    return { whole, original: await frameKeys(whole.path, false), root };
  })());

describe('rosbag2 sqlite3 storage read around its damage (tryToFix)', () => {
  test('an undamaged storage reads as strictly, with no problem', async () => {
    const { whole, original } = await prepare();
    assert.equal(original.keys.length, whole.total);
    const read = await frameKeys(whole.path, true);
    assert.deepEqual(read.keys, original.keys);
    assert.deepEqual(infoProblems(read.info), []);
  });

  const zeroPage = (file: string, page: number) => {
    const fd = openSync(file, 'r+');
    writeSync(fd, new Uint8Array(4096), 0, 4096, (page - 1) * 4096);
    closeSync(fd);
  };
  const middlePage = (file: string) => Math.floor(statSync(file).size / 2 / 4096) + 1;
  /** The rows of a table leaf page (its cell count), 0 for another page. */
  const leafRows = (file: string, page: number) => {
    const bytes = readFileSync(file).subarray((page - 1) * 4096, page * 4096);
    return bytes[0] === 13 ? bytes.readUInt16BE(3) : 0;
  };
  // Each damage, and how many messages a read around it gets (undefined: some, not all).
  const damages: Array<
    [string, (file: string, root: number) => void, ((file: string, total: number, root: number) => number)?]
  > = [
    [
      '4 KiB zeroed in the middle',
      (file) => zeroPage(file, middlePage(file)),
      // A leaf of the messages: its rows, and only those, are lost.
      (file, total) => {
        const rows = leafRows(file, middlePage(file));
        assert.ok(rows > 0, 'the page is a table leaf');
        return total - rows;
      },
    ],
    ['cut at 60 %', (file) => truncateSync(file, Math.floor(statSync(file).size * 0.6))],
    [
      // Every row lies on a leaf page the table's b-tree no longer reaches: read from those pages.
      "the messages' b-tree root zeroed",
      (file, root) => zeroPage(file, root),
      (file, total, root) => {
        assert.equal(readFileSync(file)[(root - 1) * 4096], 5, 'the root is an interior page');
        return total;
      },
    ],
  ];
  for (const [what, damage, expected] of damages) {
    test(`${what}: refused strictly; tryToFix reads each readable message once, as written, and counts the rest`, async () => {
      const { whole, original, root } = await prepare();
      const copy = join(dir, what.replace(/\W+/g, '-'));
      cpSync(whole.path, copy, { recursive: true });
      const want = expected?.(join(whole.path, 'sqlite3.db3'), whole.total, root);
      damage(join(copy, 'sqlite3.db3'), root);
      await assert.rejects(frameKeys(copy, false), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
      const read = await withOwnTempDir(async (tmp) => {
        const reader = await BagReader.create(copy, { tryToFix: true });
        try {
          assert.equal(salvageDirs(tmp), 1, 'the reader works from a salvaged copy');
        } finally {
          reader.close();
        }
        const read = await frameKeys(copy, true);
        assert.equal(salvageDirs(tmp), 0, 'the salvaged copy is removed at close');
        return read;
      });
      // Every message read is one of the bag's, exact to the nanosecond-derived µs, and none twice.
      const known = new Map<string, number>();
      for (const k of original.keys) known.set(k, (known.get(k) ?? 0) + 1);
      for (const k of read.keys) {
        const left = known.get(k) ?? 0;
        assert.ok(left > 0, `read a message the bag does not hold (or once too often): ${k.slice(0, 80)}`);
        known.set(k, left - 1);
      }
      if (want === undefined)
        assert.ok(read.keys.length > 1000 && read.keys.length < whole.total, `${read.keys.length} messages read`);
      else assert.equal(read.keys.length, want);
      assert.equal(read.info.messageCount, read.keys.length);
      assert.equal(read.info.hasCompleted, false);
      const problems = infoProblems(read.info);
      assert.ok(
        problems.some((p) => /sqlite3\.db3: .*read from a copy of what SQLite can read of it/.test(p)),
        problems.join('\n'),
      );
      assert.ok(
        problems.includes(`sqlite3.db3: ${read.keys.length} messages read`) ||
          problems.some((p) => p.startsWith(`sqlite3.db3: ${read.keys.length} messages read;`)),
        problems.join('\n'),
      );
      if (read.keys.length < whole.total)
        assert.ok(
          problems.includes(
            `metadata.yaml counts ${whole.total} messages, the storage files hold ${read.keys.length}: ${whole.total - read.keys.length} not read`,
          ),
          problems.join('\n'),
        );
    });
  }

  test('a storage whose schema does not read: CORRUPT_FILE with tryToFix too', async () => {
    const { whole } = await prepare();
    const copy = join(dir, 'schema');
    cpSync(whole.path, copy, { recursive: true });
    const file = join(copy, 'sqlite3.db3');
    // Page 1 holds sqlite_master: zeroed past the 100-byte file header, no table can be found.
    const fd = openSync(file, 'r+');
    writeSync(fd, new Uint8Array(4000), 0, 4000, 100);
    closeSync(fd);
    await assert.rejects(frameKeys(copy, true), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
  });
});
