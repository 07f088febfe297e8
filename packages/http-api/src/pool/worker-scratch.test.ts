import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { after, describe, test, withOwnTempDir } from '@vlink/fixtures/test';
import { loadDriver } from '@vlink/bag-sqlite';
import { serve } from '../index.js';

// A bag worker reads some bags from a private copy (here a rosbag2 sqlite3 storage of a crashed recording: its last
// messages are still in its -wal, which SQLite would change to read) and keeps the reader open in its cache. The
// server ends its workers by terminating them, which runs none of their cleanup: the copies, as large as the bags,
// were left in the temporary directory at every stop of the server.

const base = mkdtempSync(join(tmpdir(), 'vlink-worker-scratch-'));
const root = join(base, 'root');
after(() => rmSync(base, { recursive: true, force: true }));

/** `root/crashed.db3` and its `-wal`, copied while the database was open with transactions not yet checkpointed. */
async function crashedStorage(): Promise<void> {
  mkdirSync(root);
  const work = join(base, 'work.db3');
  copyFileSync(fixturePath('foreign', 'ros2', 'sqlite3', 'sqlite3.db3'), work);
  const db = (await loadDriver()).open(work);
  try {
    db.exec('PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;');
    db.exec('INSERT INTO messages (topic_id, timestamp, data) SELECT topic_id, timestamp + 1, data FROM messages;');
    copyFileSync(work, join(root, 'crashed.db3'));
    copyFileSync(`${work}-wal`, join(root, 'crashed.db3-wal'));
  } finally {
    db.close();
  }
}

describe('bag workers’ private copies', () => {
  test('are made in a folder of the worker’s own, which the server removes when it ends the worker', () =>
    withOwnTempDir(async (tmp) => {
      await crashedStorage();
      const scratchFolders = () => readdirSync(tmp).filter((name) => name.startsWith('vlink-bag-worker-'));
      const server = await serve({ root, port: 0, workers: 1 });
      try {
        const info = await fetch(`${server.url}/v1/bags/crashed.db3/info`);
        assert.equal(info.status, 200, await info.text());
        const made = scratchFolders();
        assert.equal(made.length, 1, `the worker's folder: ${made}`);
        // The copy of the storage and its -wal, held by the reader the worker keeps open.
        const inside = readdirSync(join(tmp, made[0]!));
        assert.ok(
          inside.some((name) => name.startsWith('vlink-rosbag2-')),
          `the copy is in it: ${inside}`,
        );
      } finally {
        await server.close();
      }
      assert.deepEqual(scratchFolders(), []);
    }));
});
