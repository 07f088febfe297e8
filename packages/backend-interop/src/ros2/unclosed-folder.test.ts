import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
import { loadDriver } from '@vlink/bag-sqlite';
import { loadMcapCodecs } from '../common/lz4.js';
import { absentRecording, foreignPath } from '../testing/expected.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';
import { Ros2Reader } from './ros2-reader.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-unclosed-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const source = () => foreignPath('ros2', 'sqlite3', 'sqlite3.db3');
/** The rosbags fixture's messages split at its middle timestamp. */
const MIDDLE = 'SELECT timestamp FROM messages ORDER BY timestamp LIMIT 1 OFFSET 45';

async function frameKeys(path: string, tryToFix = false): Promise<string[]> {
  const { reader, frames } = await readAll(path, { tryToFix });
  reader.close();
  return frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`);
}

/** A copy of the fixture's storage keeping only the messages `where` selects. */
async function storagePart(file: string, where: string): Promise<void> {
  copyFileSync(source(), file);
  const db = (await loadDriver()).open(file);
  try {
    db.exec(`DELETE FROM messages WHERE NOT (${where})`);
  } finally {
    db.close();
  }
}

describe('a rosbag2 folder without metadata.yaml (a recording that was not closed)', () => {
  test('is refused naming what is missing, and read with tryToFix in the numeric order of its files', async () => {
    const folder = join(dir, 'crashed');
    mkdirSync(folder);
    // Numbers 2 and 10: read by name, the second half would come first.
    await storagePart(join(folder, 'crashed_2.db3'), `timestamp < (${MIDDLE})`);
    await storagePart(join(folder, 'crashed_10.db3'), `timestamp >= (${MIDDLE})`);
    writeFileSync(join(folder, 'notes.txt'), 'not a storage file');
    await assert.rejects(
      BagReader.create(folder),
      (e: unknown) =>
        BagError.isInstance(e) &&
        e.code === 'CORRUPT_FILE' &&
        /has no metadata\.yaml .* holds 2 storage files; open with tryToFix to read them/.test(e.message),
    );
    const { reader, frames } = await readAll(folder, { tryToFix: true });
    try {
      const info = reader.getInfo();
      assert.equal(info.hasCompleted, false);
      assert.equal(info.splitCount, 2);
      assert.deepEqual(info.metadata?.find((m) => m.name === 'rosbag2.problems')?.values, {
        '0': 'no metadata.yaml: read the 2 storage files in their numeric order (crashed_2.db3, crashed_10.db3)',
      });
      assert.equal(frames.length, 91);
    } finally {
      reader.close();
    }
    assert.deepEqual(
      frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`),
      await frameKeys(foreignPath('ros2', 'sqlite3')),
    );
  });

  test('with file compression: the files rosbag2 compressed at each split, and the last one it had not yet', async () => {
    const folder = join(dir, 'crashed-zstd');
    mkdirSync(folder);
    const first = join(dir, 'crashed-zstd_0.db3');
    await storagePart(first, `timestamp < (${MIDDLE})`);
    const codecs = await loadMcapCodecs();
    writeFileSync(join(folder, 'crashed-zstd_0.db3.zstd'), codecs['zstd']!.compress!(readFileSync(first), 3));
    await storagePart(join(folder, 'crashed-zstd_1.db3'), `timestamp >= (${MIDDLE})`);
    assert.deepEqual(await frameKeys(folder, true), await frameKeys(foreignPath('ros2', 'sqlite3')));
  });

  test('an .mcap storage left without metadata.yaml reads the same way', async () => {
    const folder = join(dir, 'crashed-mcap');
    mkdirSync(folder);
    copyFileSync(foreignPath('ros2', 'mcap', 'mcap.mcap'), join(folder, 'crashed-mcap_0.mcap'));
    await assert.rejects(BagReader.create(folder), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    assert.deepEqual(await frameKeys(folder, true), await frameKeys(foreignPath('ros2', 'mcap')));
  });

  test('a folder of both .db3 and .mcap files, or of none, stays an error', async () => {
    const mixed = join(dir, 'mixed');
    mkdirSync(mixed);
    copyFileSync(source(), join(mixed, 'mixed_0.db3'));
    copyFileSync(foreignPath('ros2', 'mcap', 'mcap.mcap'), join(mixed, 'mixed_1.mcap'));
    await assert.rejects(
      Ros2Reader.open(mixed, { tryToFix: true }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /both \.db3 and \.mcap/.test(e.message),
    );
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    writeFileSync(join(empty, 'bag.db3'), ''); // not named as rosbag2 names its storage files
    await assert.rejects(
      Ros2Reader.open(empty, { tryToFix: true }),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND' && /no storage file/.test(e.message),
    );
    await assert.rejects(BagReader.create(empty), (e: unknown) => BagError.isInstance(e));
  });

  test('the last messages of a crashed sqlite3 storage, still only in its -wal file, are read', async () => {
    const folder = join(dir, 'crashed-wal');
    mkdirSync(folder);
    const writing = join(dir, 'writing.db3');
    copyFileSync(source(), writing);
    const db = (await loadDriver()).open(writing);
    try {
      db.exec('PRAGMA journal_mode = WAL');
      db.exec(`CREATE TABLE later AS SELECT * FROM messages WHERE timestamp >= (${MIDDLE})`);
      db.exec('DELETE FROM messages WHERE id IN (SELECT id FROM later)');
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      // From here on nothing reaches the storage file itself: the recorder "crashes" with these in its -wal.
      db.exec('PRAGMA wal_autocheckpoint = 0');
      db.exec('INSERT INTO messages SELECT * FROM later');
      db.exec('DROP TABLE later');
      copyFileSync(writing, join(folder, 'crashed-wal_0.db3'));
      copyFileSync(`${writing}-wal`, join(folder, 'crashed-wal_0.db3-wal'));
    } finally {
      db.close();
    }
    assert.deepEqual(await frameKeys(folder, true), await frameKeys(foreignPath('ros2', 'sqlite3')));
  });

  const split = 'real/ros2/v5-sqlite3-split';
  test('a real split rosbag2 bag without its metadata.yaml', { skip: absentRecording(split) }, async () => {
    const copy = join(dir, 'v5-split');
    cpSync(foreignPath(split), copy, { recursive: true });
    rmSync(join(copy, 'metadata.yaml'));
    assert.deepEqual(await frameKeys(copy, true), await frameKeys(foreignPath(split)));
  });
});
