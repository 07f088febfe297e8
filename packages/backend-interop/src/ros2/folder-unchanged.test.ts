import assert from 'node:assert/strict';
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { loadDriver } from '@vlink/bag-sqlite';
import { absentRecording, foreignPath } from '../testing/expected.js';
import { readAll, sha256 } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-unchanged-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Every file of a folder by name, with its bytes' digest. */
function contents(folder: string): string[] {
  return readdirSync(folder)
    .sort()
    .map((name) => `${name} ${sha256(readFileSync(join(folder, name)))}`);
}

/** Reads the whole bag; the folder must hold the same files with the same bytes afterwards. */
async function readLeavesFolder(bag: string, folder: string): Promise<number> {
  const before = contents(folder);
  const { reader, frames } = await readAll(bag);
  reader.close();
  assert.deepEqual(contents(folder), before);
  return frames.length;
}

/**
 * The rosbags fixture as rosbag2 leaves a WAL-mode storage: `state` `closed` (the file alone), `checkpointed` (an
 * empty -wal and a -shm beside it, as copied from a live recorder) or `crashed` (its last messages only in its -wal).
 */
async function walBag(name: string, state: 'closed' | 'checkpointed' | 'crashed'): Promise<string> {
  const folder = join(dir, name);
  cpSync(foreignPath('ros2', 'sqlite3'), folder, { recursive: true });
  const writing = join(dir, `${name}-writing.db3`);
  copyFileSync(join(folder, 'sqlite3.db3'), writing);
  const db = (await loadDriver()).open(writing);
  try {
    db.exec('PRAGMA journal_mode = WAL');
    if (state === 'crashed') {
      db.exec(
        'CREATE TABLE later AS SELECT * FROM messages WHERE timestamp >= (SELECT timestamp FROM messages ORDER BY timestamp LIMIT 1 OFFSET 45)',
      );
      db.exec('DELETE FROM messages WHERE id IN (SELECT id FROM later)');
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    if (state === 'crashed') {
      db.exec('PRAGMA wal_autocheckpoint = 0');
      db.exec('INSERT INTO messages SELECT * FROM later');
      db.exec('DROP TABLE later');
    }
    if (state !== 'closed') {
      copyFileSync(writing, join(folder, 'sqlite3.db3'));
      for (const suffix of ['-wal', '-shm']) copyFileSync(`${writing}${suffix}`, join(folder, `sqlite3.db3${suffix}`));
    }
  } finally {
    db.close();
  }
  if (state === 'closed') copyFileSync(writing, join(folder, 'sqlite3.db3'));
  return folder;
}

describe('reading a rosbag2 bag leaves its folder as it was', () => {
  test('a WAL-mode sqlite3 storage: no -shm or -wal is left beside it', async () => {
    const folder = await walBag('closed', 'closed');
    assert.deepEqual(readdirSync(folder).sort(), ['metadata.yaml', 'sqlite3.db3']);
    assert.equal(await readLeavesFolder(folder, folder), 91);
    assert.equal(await readLeavesFolder(join(folder, 'sqlite3.db3'), folder), 91, 'the .db3 opened on its own');
  });

  test('a -shm and an empty -wal beside it keep their bytes', async () => {
    const folder = await walBag('checkpointed', 'checkpointed');
    assert.equal(await readLeavesFolder(folder, folder), 91);
  });

  test('messages only in its -wal are read, and the -wal and -shm stay untouched', async () => {
    const folder = await walBag('crashed', 'crashed');
    assert.ok(readFileSync(join(folder, 'sqlite3.db3-wal')).byteLength > 0);
    assert.equal(await readLeavesFolder(folder, folder), 91);
  });

  test('a storage in rollback mode', async () => {
    const folder = join(dir, 'rollback');
    cpSync(foreignPath('ros2', 'sqlite3'), folder, { recursive: true });
    assert.equal(await readLeavesFolder(folder, folder), 91);
  });

  const talker = 'real/ros2/v4-sqlite3-talker';
  test('a real WAL-mode storage written by rosbag2', { skip: absentRecording(talker) }, async () => {
    const folder = join(dir, 'talker');
    mkdirSync(folder);
    for (const name of ['metadata.yaml', 'talker.db3'])
      copyFileSync(join(foreignPath(talker), name), join(folder, name));
    assert.ok((await readLeavesFolder(folder, folder)) > 0);
  });
});
