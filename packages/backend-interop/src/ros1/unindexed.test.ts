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

  test('a chunk in the middle that does not read is skipped, and the scan goes on after it', async () => {
    // Before, the first chunk that did not decompress ended the scan: every chunk after it was lost.
    const second = 5791; // lz4.bag: the bag header record (13..4109), chunk 1, its index data, then chunk 2
    const path = unindexed('bad-middle.bag', (index) => index);
    const bytes = new Uint8Array(readFileSync(path));
    const view = new DataView(bytes.buffer);
    const dataAt = second + 4 + view.getUint32(second, true);
    bytes.fill(0, dataAt + 4, dataAt + 4 + view.getUint32(dataAt, true));
    writeFileSync(path, bytes);
    const sound = await readAll(foreignPath('ros1', 'lz4.bag'));
    const { reader, frames } = await readAll(path, { tryToFix: true });
    try {
      const known = new Set(sound.frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`));
      const keys = frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`);
      assert.ok(keys.every((k) => known.has(k)) && new Set(keys).size === keys.length);
      assert.equal(frames.length, 91 - 16, 'every message but the 16 of the zeroed chunk');
      const problems = Object.values(
        reader.getInfo().metadata?.find((m) => m.name === 'rosbag.problems')?.values ?? {},
      );
      assert.ok(
        problems.some((p) => p.startsWith(`1 chunk(s) that do not read skipped: `) && p.includes(`(offset ${second})`)),
        problems.join('\n'),
      );
    } finally {
      sound.reader.close();
      reader.close();
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

/** lz4.bag with its index cut off or overwritten; `damage` gets the bytes and the index position. */
function damagedIndex(name: string, damage: (bytes: Uint8Array, indexPosition: number) => Uint8Array): string {
  const bytes = new Uint8Array(readFileSync(foreignPath('ros1', 'lz4.bag')));
  const text = new TextDecoder('latin1').decode(bytes.subarray(0, 4096));
  const field = text.indexOf('index_pos=') + 'index_pos='.length;
  const indexPosition = Number(new DataView(bytes.buffer).getBigUint64(field, true));
  const path = join(dir, name);
  writeFileSync(path, damage(bytes, indexPosition));
  return path;
}

const keysOf = (frames: Array<{ url: string; timestamp: number; sha256: string }>) =>
  frames.map((f) => `${f.url} ${f.timestamp} ${f.sha256}`);

describe('a ROS 1 bag whose index is damaged', () => {
  test('cut in its index (closing stopped half way): refused naming tryToFix, which finds every chunk by scanning', async () => {
    // Found by hand: cut at 95 % (inside the index, after every chunk) the bag was refused even with tryToFix.
    const path = damagedIndex('cut-index.bag', (bytes, index) => bytes.subarray(0, index + 500));
    await assert.rejects(
      BagReader.create(path),
      (e: unknown) =>
        BagError.isInstance(e) &&
        e.code === 'CORRUPT_FILE' &&
        /the bag's index is damaged \(.*runs past the end; offset \d+\); open with tryToFix/.test(e.message),
    );
    const sound = await readAll(foreignPath('ros1', 'lz4.bag'));
    const scanned = await readAll(path, { tryToFix: true });
    try {
      assert.deepEqual(keysOf(scanned.frames), keysOf(sound.frames));
      assert.equal(scanned.reader.getInfo().hasCompleted, false);
      const problems = Object.values(
        scanned.reader.getInfo().metadata?.find((m) => m.name === 'rosbag.problems')?.values ?? {},
      );
      assert.match(problems[0] ?? '', /the bag's index is damaged .*: its chunks were found by scanning the file/);
      assert.match(problems[1] ?? '', /the last \d+ bytes of the file are not read/);
    } finally {
      sound.reader.close();
      scanned.reader.close();
    }
  });

  test('an indexed bag with a chunk that does not read: tryToFix leaves it out, names it, and reads the rest', async () => {
    // Found by hand: one zeroed chunk, and `clone --try-to-fix` (which `check` points at) copied nothing.
    const second = 5791;
    const path = damagedIndex('zeroed-chunk.bag', (bytes) => {
      const out = bytes.slice();
      const view = new DataView(out.buffer);
      const dataAt = second + 4 + view.getUint32(second, true);
      out.fill(0, dataAt + 4, dataAt + 4 + view.getUint32(dataAt, true));
      return out;
    });
    await assert.rejects(readAll(path), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    const sound = await readAll(foreignPath('ros1', 'lz4.bag'));
    const { reader, frames } = await readAll(path, { tryToFix: true });
    try {
      const known = new Set(keysOf(sound.frames));
      assert.ok(keysOf(frames).every((k) => known.has(k)));
      assert.equal(frames.length, 91 - 16);
      const info = reader.getInfo();
      assert.equal(info.messageCount, 91 - 16);
      assert.equal(info.hasCompleted, false);
      const problems = Object.values(info.metadata?.find((m) => m.name === 'rosbag.problems')?.values ?? {});
      assert.deepEqual(problems, [
        `1 chunk(s) that do not read skipped (16 messages, as their chunk infos count them): lz4 chunk does not decompress: not an lz4 frame (magic) (offset ${second})`,
      ]);
    } finally {
      sound.reader.close();
      reader.close();
    }
  });

  test('a chunk copied over the index: the scan reads each message once and says what it skipped', async () => {
    // Found by hand copying records over others: the scan read the copy too, 16 messages twice.
    const chunkAt = 4109;
    const path = damagedIndex('copied-chunk.bag', (bytes, index) => {
      const view = new DataView(bytes.buffer);
      const headerLength = view.getUint32(chunkAt, true);
      const length = 8 + headerLength + view.getUint32(chunkAt + 4 + headerLength, true);
      const out = bytes.slice();
      out.copyWithin(index, chunkAt, chunkAt + length);
      return out;
    });
    await assert.rejects(BagReader.create(path), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    const sound = await readAll(foreignPath('ros1', 'lz4.bag'));
    const scanned = await readAll(path, { tryToFix: true });
    try {
      const keys = keysOf(scanned.frames);
      assert.equal(new Set(keys).size, keys.length, 'no message twice');
      assert.deepEqual(keys, keysOf(sound.frames), 'every chunk is before the index');
      const problems = Object.values(
        scanned.reader.getInfo().metadata?.find((m) => m.name === 'rosbag.problems')?.values ?? {},
      );
      assert.ok(
        problems.some((p) => /^1 chunk\(s\) repeating an earlier one byte for byte skipped \(\d+ messages\)$/.test(p)),
        problems.join('\n'),
      );
    } finally {
      sound.reader.close();
      scanned.reader.close();
    }
  });
});
