import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
import { foreignPath } from '../testing/expected.js';
import { readAll } from '../testing/read-all.js';
import { registerAll } from '../testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-ros1-unindexed-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * `rosbag record` stopped before it closed the bag (a `.bag.active`): the bag header still says `index_pos=0` and
 * the file ends after the last chunk (and its index data records), or inside it.
 */
function unindexed(name: string, cut: (indexPosition: number) => number): string {
  const bytes = new Uint8Array(readFileSync(foreignPath('ros1', 'lz4.bag')));
  const text = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  const field = text.indexOf('index_pos=') + 'index_pos='.length;
  const view = new DataView(bytes.buffer);
  const indexPosition = Number(view.getBigUint64(field, true));
  view.setBigUint64(field, 0n, true);
  const path = join(dir, name);
  writeFileSync(path, bytes.subarray(0, cut(indexPosition)));
  return path;
}

describe('a ROS 1 bag without its index (not closed)', () => {
  test('refused, naming rosbag reindex; with tryToFix every chunk is found by scanning', async () => {
    const path = unindexed('active.bag', (index) => index);
    await assert.rejects(
      BagReader.create(path),
      (e: unknown) =>
        BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && /no index.*rosbag reindex.*tryToFix/.test(e.message),
    );
    const sound = await readAll(foreignPath('ros1', 'lz4.bag'));
    const scanned = await readAll(path, { tryToFix: true });
    try {
      const info = scanned.reader.getInfo();
      const want = sound.reader.getInfo();
      assert.deepEqual(
        scanned.frames.map((f) => [f.url, f.timestamp, f.publishTime, f.sequence, f.sha256]),
        sound.frames.map((f) => [f.url, f.timestamp, f.publishTime, f.sequence, f.sha256]),
      );
      assert.deepEqual(info.urls, want.urls);
      assert.equal(info.startTimestamp, want.startTimestamp);
      assert.equal(info.hasCompleted, false);
      assert.match(info.metadata?.find((m) => m.name === 'rosbag.problems')?.values['0'] ?? '', /found by scanning/);
    } finally {
      sound.reader.close();
      scanned.reader.close();
    }
  });

  test('cut inside its last chunk: the whole chunks are read, and the bytes not read are told', async () => {
    const path = unindexed('cut.bag', (index) => index - 300);
    const { reader, frames } = await readAll(path, { tryToFix: true });
    try {
      const info = reader.getInfo();
      assert.ok(frames.length > 0 && frames.length < 91, `${frames.length} of 91 messages`);
      assert.equal(info.messageCount, frames.length);
      const problems = info.metadata?.find((m) => m.name === 'rosbag.problems')?.values ?? {};
      assert.match(problems['1'] ?? '', /at offset \d+: the last \d+ bytes of the file are not read/);
    } finally {
      reader.close();
    }
  });
});
