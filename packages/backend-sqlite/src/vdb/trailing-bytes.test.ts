import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, test } from '@vlink/fixtures/test';
import { BagError, resolveWriterConfig } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { rawFrame, tempDir, withDb } from '../testing/util.js';
import { VdbReader } from './reader.js';

// Bytes after a .vdb's last page are not read by SQLite: a file with another appended (`cat a.vdb b.vdb > c.vdb`)
// read as the first alone, and `check` and `fix` said nothing of the rest (found by hand: 500 of 1,000 frames).
const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('trailing');
after(() => tmp.cleanup());

async function record(name: string, url: string): Promise<string> {
  const path = tmp.path(name);
  const writer = await backend.createWriter(path, resolveWriterConfig({ compress: 'none' }), createTestContext());
  for (let i = 0; i < 200; i++) writeFrame(writer, rawFrame(i * 1000, url, new Uint8Array(48).fill(i & 255)));
  writer.close();
  return path;
}

async function appended(name: string, prepare?: (first: string) => void): Promise<{ path: string; extra: number }> {
  const [a, b] = [await record(`${name}-a.vdb`, 'dds://a'), await record(`${name}-b.vdb`, 'dds://b')];
  prepare?.(a);
  const path = tmp.path(`${name}.vdb`);
  const second = readFileSync(b);
  writeFileSync(path, Buffer.concat([readFileSync(a), second]));
  return { path, extra: second.length };
}

test('a closed .vdb with bytes after its last page: a strict open refuses it, tryToFix reads it, check fails', async () => {
  const { path, extra } = await appended('closed');
  assert.throws(
    () => VdbReader.open(driver, path),
    (e: unknown) =>
      BagError.isInstance(e) &&
      e.code === 'CORRUPT_FILE' &&
      e.reason ===
        `${extra} bytes follow the database's last page, which SQLite does not read (another file appended to it?) (open with tryToFix to read the database)`,
  );
  const reader = VdbReader.open(driver, path, { tryToFix: true });
  try {
    assert.equal([...reader.frames({})].length, 200, 'the first recording, all of it');
    const report = await reader.verify({ quick: true });
    assert.equal(report.ok, false);
    assert.ok(report.problems.some((p) => p.message.startsWith(`${extra} bytes follow the database's last page`)));
  } finally {
    reader.close();
  }
});

test('fix of such a file is not lossless: it names the bytes it leaves out', async () => {
  const { path, extra } = await appended('fixed');
  const result = await backend.salvage!(path, `${path}.repaired.vdb`);
  assert.deepEqual(result.lostMetadata, [`${extra} bytes after the database's last page (the input still has them)`]);
  assert.ok(result.problems.some((p) => p.endsWith('(another file appended to it?): left out of the copy')));
  const copy = VdbReader.open(driver, `${path}.repaired.vdb`);
  try {
    assert.equal([...copy.frames({})].length, 200);
  } finally {
    copy.close();
  }
});

test('an unfinished .vdb with bytes after its last page still opens (a writer may have died inside a commit)', async () => {
  const { path, extra } = await appended('unfinished', (first) =>
    withDb(driver, first, (db) => db.exec('UPDATE VLinkHeader SET complete = 0;')),
  );
  const reader = VdbReader.open(driver, path);
  try {
    assert.equal(reader.info().hasCompleted, false);
    assert.equal([...reader.frames({})].length, 200);
    const report = await reader.verify({ quick: true });
    assert.ok(report.problems.some((p) => p.message.startsWith(`${extra} bytes follow the database's last page`)));
  } finally {
    reader.close();
  }
});
