import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagError,
  BagReader,
  BagWriter,
  infoProblems,
  registerBackend,
  repairBag,
  SchemaType,
} from '@vlink/bag-core';
import { sqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { tempDir } from '../testing/util.js';

// A tryToFix read of a damaged .vdb reads what `fix` would keep and says what it lost (found by hand: 4 KiB zeroed
// in the middle of a 2,000-frame .vdb, and `clone --try-to-fix` copied the 730 frames before the damage without a
// word of the 1,270 others; a .vdb cut short did not open at all).

registerBackend(sqliteBackend);
const driver = await loadDriver();
const tmp = tempDir('read-around');
after(() => tmp.cleanup());
const COUNT = 2000;

async function record(): Promise<string> {
  const path = tmp.path('whole.vdb');
  const writer = await BagWriter.create(path, { syncMode: true });
  for (let i = 0; i < COUNT; i++)
    writer.push({
      timestamp: i * 1000,
      url: `dds://t${i % 3}`,
      data: new Uint8Array(100).fill(i & 255),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  await writer.close();
  return path;
}

const whole = await record();

/** A copy of the recording with `damage` done to its bytes. */
function damaged(name: string, damage: (bytes: Buffer) => Buffer): string {
  const path = tmp.path(name);
  writeFileSync(path, damage(readFileSync(whole)));
  return path;
}

/** Every frame read, with tryToFix (reads are counted against what was written: payload byte = index & 255). */
async function readAll(path: string, tryToFix: boolean) {
  const reader = await BagReader.create(path, { tryToFix });
  try {
    const frames: Array<{ timestamp: number; first: number }> = [];
    for await (const f of reader.frames()) frames.push({ timestamp: f.timestamp, first: f.data[0]! });
    return { frames, info: reader.getInfo() };
  } finally {
    reader.close();
  }
}

/** Salvaged copies of `path` left in the temp directory (the copy keeps the file's name, made unique per run). */
const copiesLeft = (path: string) =>
  readdirSync(tmpdir()).filter(
    (dir) => dir.startsWith('vlink-vdb-read-around-') && existsSync(join(tmpdir(), dir, basename(path))),
  );

function rootPage(path: string, table: string): number {
  const db = driver.open(path, { readOnly: true });
  try {
    return Number(db.prepare('SELECT rootpage FROM sqlite_master WHERE name = ?').get(table)!['rootpage']);
  } finally {
    db.close();
  }
}

describe('a tryToFix read of a damaged .vdb', () => {
  test('4 KiB zeroed mid-file: the strict read fails, tryToFix reads what fix keeps and lists what it lost', async () => {
    const path = damaged(`zeroed-${randomUUID().slice(0, 8)}.vdb`, (b) =>
      b.fill(0, b.length >> 1, (b.length >> 1) + 4096),
    );
    await assert.rejects(readAll(path, false), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    const { frames, info } = await readAll(path, true);
    assert.deepEqual(copiesLeft(path), [], 'the salvaged copy is deleted at close');
    const times = frames.map((f) => f.timestamp);
    assert.equal(new Set(times).size, times.length, 'no frame twice');
    for (const f of frames) assert.equal(f.first, (f.timestamp / 1000) & 255, `frame at ${f.timestamp} as written`);
    assert.ok(frames.length > COUNT / 2 && frames.length < COUNT, `${frames.length} of ${COUNT}`);
    assert.equal(info.messageCount, frames.length);
    assert.equal(info.hasCompleted, false);
    assert.equal(info.path, path, 'named as the damaged file, not its copy');
    const problems = infoProblems(info);
    assert.match(
      problems[0] ?? '',
      /^the read stops at damage \(.*\): read as fix would repair it, from a salvaged copy$/,
    );
    assert.equal(
      problems[1],
      `${frames.length} frames read, ${COUNT - frames.length} lost (${(COUNT - frames.length) * 100} bytes of the file not used)`,
    );
    // The same frames as the repair keeps.
    const repaired = tmp.path('zeroed-fixed.vdb');
    const report = await repairBag(path, { output: repaired });
    assert.equal(report.frames, frames.length);
  });

  test('cut short: refused strict (it does not open); tryToFix reads the rows before the cut', async () => {
    const path = damaged('cut.vdb', (b) => b.subarray(0, Math.floor(b.length * 0.6)));
    await assert.rejects(readAll(path, false), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    const { frames, info } = await readAll(path, true);
    assert.ok(frames.length > 0 && frames.length < COUNT, `${frames.length} of ${COUNT}`);
    for (const f of frames) assert.equal(f.first, (f.timestamp / 1000) & 255);
    assert.match(infoProblems(info)[0] ?? '', /^the file does not open \(.*malformed.*\): read as fix would repair it/);
  });

  test("the frames' b-tree root zeroed: tryToFix and fix read every frame from the leaf pages it cut off", async () => {
    const bytes = readFileSync(whole);
    const pageSize = bytes.readUInt16BE(16);
    const root = rootPage(whole, 'VLinkDatas');
    assert.equal(bytes[(root - 1) * pageSize], 5, 'the root is an interior page (the frames fill many pages)');
    const path = damaged('root-zeroed.vdb', (b) => b.fill(0, (root - 1) * pageSize, root * pageSize));
    await assert.rejects(readAll(path, false));
    const { frames, info } = await readAll(path, true);
    assert.equal(frames.length, COUNT);
    frames.forEach((f, i) => {
      assert.equal(f.timestamp, i * 1000, 'in their order');
      assert.equal(f.first, i & 255, `frame ${i} as written`);
    });
    assert.ok(
      infoProblems(info).includes(`VLinkDatas: ${COUNT} rows read from pages its b-tree no longer reaches`),
      infoProblems(info).join('\n'),
    );
    const report = await repairBag(path, { output: tmp.path('root-zeroed-fixed.vdb') });
    assert.deepEqual([report.frames, report.lostFrames], [COUNT, 0]);
  });

  test('a leaf page zeroed: the frames of that page are lost, and only those', async () => {
    const bytes = readFileSync(whole);
    const pageSize = bytes.readUInt16BE(16);
    // A table leaf past the middle of the file: one of the frames' (the one table of many pages).
    let leaf = Math.floor(bytes.length / pageSize / 2);
    while (bytes[(leaf - 1) * pageSize] !== 13) leaf++;
    const cells = bytes.readUInt16BE((leaf - 1) * pageSize + 3);
    const path = damaged('leaf-zeroed.vdb', (b) => b.fill(0, (leaf - 1) * pageSize, leaf * pageSize));
    const { frames } = await readAll(path, true);
    assert.equal(frames.length, COUNT - cells);
    for (const f of frames) assert.equal(f.first, (f.timestamp / 1000) & 255);
  });

  test('a whole file reads as it is, with nothing listed', async () => {
    const path = tmp.path('copy.vdb');
    copyFileSync(whole, path);
    const { frames, info } = await readAll(path, true);
    assert.equal(frames.length, COUNT);
    assert.equal(info.hasCompleted, true);
    assert.deepEqual(infoProblems(info), []);
    assert.ok(existsSync(path));
  });
});
