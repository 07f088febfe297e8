import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, SchemaType } from '@vlink/bag';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { exportedRows, exportFrames, type PushedFrame, URLS, writeExportBag } from '../testing/export-bags.js';
import { exportMessages } from './export-messages.js';
import { encodeUrlPartition, MAX_NAME_BYTES, partitionName } from './paths.js';

/** Write-outs that fail, and urls too long for a folder name: a typed error, or an export that fits. */
const SLOW = { timeout: 120_000 };
const dir = mkdtempSync(join(tmpdir(), 'lake-export-failures-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('exportMessages: a write-out that fails', () => {
  test('part-way through a bag: one BagError naming the part, never an unhandled rejection', SLOW, async () => {
    const bag = join(dir, 'blocked.vcap');
    await writeExportBag(bag, exportFrames(400));
    const out = join(dir, 'blocked');
    // A file where the JSON url's partition folder must go: every write-out of that url fails (ENOTDIR).
    mkdirSync(join(out, 'messages'), { recursive: true });
    writeFileSync(join(out, 'messages', `url=${encodeUrlPartition(URLS.json)}`), '');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Small batches: the url is written out many times while the bag is read, so a failed write-out is met by
      // the next flush while another is under way (which used to be left without a handler).
      await assert.rejects(exportMessages([bag], out, { rowGroupRows: 2 }), (error: unknown) => {
        assert.ok(error instanceof BagError, `a BagError, not ${String(error)}`);
        assert.equal(error.code, 'IO_ERROR');
        assert.match(error.message, /cannot write the part file of url/);
        assert.ok(error.file?.includes(`url=${encodeUrlPartition(URLS.json)}`), error.file);
        return true;
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    assert.deepEqual(unhandled, []);
    // The next run (the obstacle gone) redoes the bag whole.
    rmSync(join(out, 'messages', `url=${encodeUrlPartition(URLS.json)}`));
    const report = await exportMessages([bag], out);
    assert.equal(report.messages, 400);
    assert.equal((await exportedRows(out)).length, 400);
  });
});

describe('exportMessages: urls too long for a folder name', () => {
  const long = `/${Array.from({ length: 60 }, () => 'seg').join('/')}/x`;
  const other = `${long}y`;
  const frames: PushedFrame[] = [long, other, long].map((url, i) => ({
    frame: {
      timestamp: i * 1000,
      publishTime: i * 1000,
      url,
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
      data: new TextEncoder().encode(JSON.stringify({ i })),
    },
    data: { i },
  }));

  test('partition names stay within 255 bytes, end in a hash, and tell two long urls apart', () => {
    assert.ok(Buffer.byteLength(`url=${encodeUrlPartition(long)}`) > MAX_NAME_BYTES, 'the url is long enough');
    const a = partitionName(long);
    const b = partitionName(other);
    assert.ok(Buffer.byteLength(a) <= MAX_NAME_BYTES && Buffer.byteLength(b) <= MAX_NAME_BYTES);
    assert.notEqual(a, b);
    assert.match(a, /^url=%2Fseg%2Fseg.*~[0-9a-f]{16}$/);
    assert.doesNotMatch(a, /%[0-9A-F]?~/, 'never cuts an escape');
    assert.equal(partitionName('/short'), 'url=%2Fshort');
    const wide = 'ä'.repeat(200);
    assert.ok(Buffer.byteLength(partitionName(wide)) <= MAX_NAME_BYTES);
    assert.match(partitionName(wide), /^url=ä+~/u);
  });

  test('a bag with such urls exports (was: ENAMETOOLONG); the rows hold the whole url', SLOW, async () => {
    const bag = join(dir, 'long.vcap');
    await writeExportBag(bag, frames);
    const out = join(dir, 'long');
    const report = await exportMessages([bag], out);
    assert.equal(report.messages, 3);
    const folders = readdirSync(join(out, 'messages')).sort();
    assert.deepEqual(folders, [partitionName(long), partitionName(other)].sort());
    // `url` as the files hold it: whole (with hive partitioning on, engines take the folder's shortened name).
    const rows = await exportedRows(out, 'seq, data.i AS i');
    assert.deepEqual(
      rows.map((r) => Number(r['i'])),
      [0, 1, 2],
    );
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const glob = join(out, 'messages', '**', '*.parquet').replaceAll("'", "''");
    const urls = (
      await connection.runAndReadAll(`SELECT url FROM read_parquet('${glob}', hive_partitioning = false) ORDER BY seq`)
    ).getRows();
    connection.closeSync();
    instance.closeSync();
    assert.deepEqual(
      urls.map(([url]) => url),
      [long, other, long],
    );
  });
});
