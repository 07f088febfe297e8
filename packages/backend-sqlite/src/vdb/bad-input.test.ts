import assert from 'node:assert/strict';
import { copyFileSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, resolveWriterConfig, SchemaType, type BagErrorCode } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { noise, tempDir, withDb } from '../testing/util.js';

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('bad');
after(() => tmp.cleanup());

const is = (code: BagErrorCode) => (e: unknown) => {
  assert.ok(BagError.isInstance(e), `expected a BagError, got ${String(e)}`);
  assert.equal(e.code, code, e.message);
  return true;
};

async function good(): Promise<string> {
  const path = tmp.path('good.vdb');
  const writer = await backend.createWriter(path, resolveWriterConfig({ compress: 'lzav' }), createTestContext());
  for (let i = 0; i < 400; i++) {
    writeFrame(writer, {
      timestamp: i * 1000,
      url: `dds://u${i % 4}`,
      data: noise(3000, i + 1),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  writer.close();
  return path;
}

/** Opens and reads everything; any failure must be a typed BagError. */
async function readFully(path: string): Promise<void> {
  const reader = await backend.openReader(path, { readOnly: true });
  try {
    for (const _ of reader.frames({})) void _;
  } finally {
    reader.close();
  }
}

describe('.vdb bad input gives typed errors', () => {
  test('missing file → NOT_FOUND; wrong extension → UNSUPPORTED_FORMAT', async () => {
    await assert.rejects(backend.openReader(tmp.path('nope.vdb'), {}), is('NOT_FOUND'));
    await assert.rejects(backend.openReader(tmp.path('x.mcap'), {}), is('UNSUPPORTED_FORMAT'));
  });

  test('garbage → CORRUPT_FILE; empty file (no tables) → CORRUPT_FILE', async () => {
    const garbage = tmp.path('garbage.vdb');
    writeFileSync(garbage, noise(8192));
    await assert.rejects(backend.openReader(garbage, {}), is('CORRUPT_FILE'));
    const empty = tmp.path('empty.vdb');
    writeFileSync(empty, new Uint8Array(0));
    await assert.rejects(backend.openReader(empty, {}), is('CORRUPT_FILE'));
  });

  test('truncated file → CORRUPT_FILE at open or while reading', async () => {
    const source = await good();
    const size = readFileSync(source).length;
    for (const keep of [100, 16384 + 10, Math.floor(size / 2)]) {
      const path = tmp.path(`trunc-${keep}.vdb`);
      copyFileSync(source, path);
      truncateSync(path, keep);
      await assert.rejects(readFully(path), is('CORRUPT_FILE'), `truncated to ${keep} of ${size}`);
    }
  });

  test('wrong major → VERSION_MISMATCH; wrong accuracy or no header row → CORRUPT_FILE', async () => {
    const major = await good();
    withDb(driver, major, (db) => db.exec('UPDATE VLinkHeader SET major = 3;'));
    await assert.rejects(backend.openReader(major, {}), is('VERSION_MISMATCH'));
    const accuracy = await good();
    withDb(driver, accuracy, (db) => db.exec("UPDATE VLinkHeader SET accuracy = 'MilliSecond';"));
    await assert.rejects(backend.openReader(accuracy, {}), is('CORRUPT_FILE'));
    const noRow = await good();
    withDb(driver, noRow, (db) => db.exec('DELETE FROM VLinkHeader;'));
    await assert.rejects(backend.openReader(noRow, {}), is('CORRUPT_FILE'));
  });

  test('VLinkUrls rows that name no url, or none at all in a closed file with rows → CORRUPT_FILE (tryToFix opens)', async () => {
    // Found by hand, copying whole pages: another table's rows read as url rows, and a strict read gave no frame.
    for (const [sql, words] of [
      ['UPDATE VLinkUrls SET url = NULL WHERE id = 1;', /a VLinkUrls row \(id 1\) holds no url/],
      [
        "UPDATE VLinkUrls SET id = 'x' WHERE id = 2;",
        /the VLinkUrls row of "dds:\/\/u2" has the id "x", not an integer/,
      ],
      ['DELETE FROM VLinkUrls;', /the header counts 400 messages, but VLinkUrls names no url/],
    ] as const) {
      const path = await good();
      withDb(driver, path, (db) => db.exec(sql));
      await assert.rejects(
        backend.openReader(path, {}),
        (e: unknown) => is('CORRUPT_FILE')(e) && words.test((e as BagError).reason),
      );
      (await backend.openReader(path, { tryToFix: true })).close();
    }
  });

  test('a damaged compressed row → CORRUPT_DATA while reading', async () => {
    const path = tmp.path('baddata.vdb');
    const writer = await backend.createWriter(path, resolveWriterConfig({ compress: 'lzav' }), createTestContext());
    writeFrame(writer, {
      timestamp: 1,
      url: 'dds://a',
      data: new Uint8Array(4096).fill(7),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
    writer.close();
    withDb(driver, path, (db) => {
      const row = db.prepare('SELECT data FROM VLinkDatas').get()!['data'] as Uint8Array;
      const broken = new Uint8Array(row);
      broken[4] = 0x7f; // claims ~2 GiB
      db.prepare('UPDATE VLinkDatas SET data = ?').run(broken);
    });
    await assert.rejects(readFully(path), is('CORRUPT_DATA'));
  });

  test('a file locked by a writer → typed error, not a raw driver error', async () => {
    const path = tmp.path('locked.vdb');
    const writer = await backend.createWriter(path, resolveWriterConfig(), createTestContext());
    writeFrame(writer, {
      timestamp: 1,
      url: 'dds://a',
      data: new Uint8Array(4),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
    await assert.rejects(readFully(path), (e: unknown) => BagError.isInstance(e));
    writer.close();
    await readFully(path);
  });
});
