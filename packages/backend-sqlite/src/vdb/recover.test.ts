import assert from 'node:assert/strict';
import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, infoProblems, resolveWriterConfig, SchemaType } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { noise, tempDir } from '../testing/util.js';
import type { VdbReader } from './reader.js';

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('recover');
after(() => tmp.cleanup());

const frame = (i: number) => ({
  timestamp: i * 1000,
  url: `dds://u${i % 3}`,
  data: noise(2000, i + 1),
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
});

/**
 * The files a writer killed mid-transaction leaves: the database and its hot journal, copied while the writer still
 * holds them (it is never closed), exactly as a kill -9 would leave them on disk.
 */
async function crashedCopy(committed: number, pending: number): Promise<string> {
  const live = tmp.path('live.vdb');
  const writer = await backend.createWriter(
    live,
    resolveWriterConfig({ cacheSize: 64 * 1024 * 1024 }),
    createTestContext(),
  );
  for (let i = 0; i < committed; i++) writeFrame(writer, frame(i));
  writer.commit();
  for (let i = committed; i < committed + pending; i++) writeFrame(writer, frame(i));
  const copy = tmp.path('crashed.vdb');
  copyFileSync(live, copy);
  if (existsSync(`${live}-journal`)) copyFileSync(`${live}-journal`, `${copy}-journal`);
  writer.close();
  return copy;
}

async function readAll(path: string, options: { tryToFix?: boolean; readOnly?: boolean }): Promise<number[]> {
  const reader = await backend.openReader(path, options);
  try {
    return [...reader.frames({})].map((f) => f.timestamp / 1000);
  } finally {
    reader.close();
  }
}

describe('.vdb after a crash (tryToFix)', () => {
  test('a hot journal: read-only open names the fix; tryToFix rolls it back and reads every committed frame', async () => {
    const path = await crashedCopy(300, 200);
    assert.equal(readFileSync(`${path}-journal`)[0], 0xd9, 'the copy carries a hot journal');
    await assert.rejects(backend.openReader(path, { readOnly: true }), (e: unknown) => {
      assert.ok(BagError.isInstance(e));
      assert.equal(e.code, 'CORRUPT_FILE');
      assert.match(e.message, /tryToFix/);
      return true;
    });
    assert.deepEqual(
      await readAll(path, { tryToFix: true }),
      Array.from({ length: 300 }, (_, i) => i),
    );
    // Rolled back for good: a plain read-only open works now.
    assert.equal((await readAll(path, {})).length, 300);
  });

  test('tryToFix on a clean file changes nothing; fix() afterwards marks a crashed file complete', async () => {
    const path = await crashedCopy(120, 30);
    const reader = (await backend.openReader(path, { tryToFix: true, readOnly: false })) as VdbReader;
    assert.equal(reader.info().hasCompleted, false);
    assert.equal(await reader.fix!(false), true);
    assert.equal(reader.info().hasCompleted, true);
    assert.equal(reader.info().messageCount, 120);
    assert.equal(await reader.check!(), true);
    reader.close();
    assert.equal((await readAll(path, { tryToFix: true })).length, 120);
  });

  test('damaged pages: tryToFix reads what the salvage keeps, and says so, instead of throwing', async () => {
    const path = tmp.path('damaged.vdb');
    const writer = await backend.createWriter(path, resolveWriterConfig(), createTestContext());
    for (let i = 0; i < 400; i++) writeFrame(writer, frame(i));
    writer.close();
    const bytes = new Uint8Array(readFileSync(path));
    // Zero the second half of the file: the header, tables and early rows stay readable.
    bytes.fill(0, Math.floor(bytes.length / 2));
    writeFileSync(path, bytes);
    await assert.rejects(readAll(path, {}), (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE');
    const reader = (await backend.openReader(path, { tryToFix: true })) as VdbReader;
    const got = [...reader.frames({})].map((f) => f.timestamp / 1000);
    assert.ok(got.length > 0 && got.length < 400, `read ${got.length}`);
    // Read from the salvaged copy (see read-around.ts), which names the damage it went around.
    assert.equal(reader.info().hasCompleted, false);
    assert.match(infoProblems(reader.info())[0] ?? '', /^the read stops at damage \(.*\): read as fix would repair it/);
    assert.equal(reader.info().messageCount, got.length);
    reader.close();
  });
});
