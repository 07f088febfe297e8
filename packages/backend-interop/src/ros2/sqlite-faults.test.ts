import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
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
});
