import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { CATALOG_BAGS_FILE, CATALOG_URLS_FILE } from '../layout.js';
import { catalogFrames, duckRows, sqlPath, writeCatalogBag } from '../testing/catalog-bags.js';
import { indexBags } from './index-bags.js';

/**
 * A bag is its location: `bag_id` (the path relative to the indexed root) is unique in a written catalog, but while a
 * run indexes, two bags may share one, and a row must never be dropped or kept under the wrong id because of that.
 */
const dir = mkdtempSync(join(tmpdir(), 'vlink-catalog-identity-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const bags = async (at: string) =>
  (await duckRows(`SELECT bag_id, location, message_count FROM read_parquet(${sqlPath(at, CATALOG_BAGS_FILE)})`)).map(
    (r) => [r['bag_id'], r['location'], Number(r['message_count'])],
  );
const urls = async (at: string) =>
  (await duckRows(`SELECT bag_id, url FROM read_parquet(${sqlPath(at, CATALOG_URLS_FILE)}) ORDER BY ALL`)).map((r) => [
    r['bag_id'],
    r['url'],
  ]);

describe('indexBags: bags sharing a bag_id', () => {
  const a = join(dir, 'A');
  const b = join(dir, 'B');
  before(async () => {
    await writeCatalogBag(join(a, 'run.vdb'), catalogFrames(6));
    await writeCatalogBag(join(b, 'run.vdb'), catalogFrames(8));
  });

  test('a root added before one already indexed: its bag gets the row, the other fails (was: both lost)', async () => {
    const at = join(dir, 'catalog-added');
    const first = await indexBags([b], at);
    assert.equal(first.added, 1);
    assert.deepEqual(await bags(at), [['run.vdb', join(b, 'run.vdb'), catalogFrames(8).length]]);
    const second = await indexBags([a, b], at);
    assert.equal(second.added, 1);
    assert.deepEqual(
      second.failed.map((f) => [f.location, f.code]),
      [[join(b, 'run.vdb'), 'INVALID_ARGUMENT']],
    );
    assert.equal(second.bags, 1);
    assert.equal(second.urls, 2);
    assert.deepEqual(await bags(at), [['run.vdb', join(a, 'run.vdb'), catalogFrames(6).length]]);
    assert.deepEqual(await urls(at), [
      ['run.vdb', '/imu'],
      ['run.vdb', '/lidar'],
    ]);
  });

  test('a bag indexed under another root than before: its row takes the new id, never keeps a stale one', async () => {
    const at = join(dir, 'catalog-moved');
    await indexBags([dir], at);
    assert.deepEqual((await bags(at)).map(([id]) => id).sort(), ['A/run.vdb', 'B/run.vdb']);
    // The same file, unchanged, now under the root B: its id is `run.vdb`, which the row must say.
    const report = await indexBags([b], at);
    assert.deepEqual([report.updated, report.unchanged, report.removed], [1, 0, 1]);
    assert.deepEqual(await bags(at), [['run.vdb', join(b, 'run.vdb'), catalogFrames(8).length]]);
    assert.deepEqual(await urls(at), [
      ['run.vdb', '/imu'],
      ['run.vdb', '/lidar'],
    ]);
  });
});
