import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { S3Client } from '@vlink/bag-s3';
import { fixturePath } from '@vlink/fixtures';
import { s3TestServer } from '@vlink/fixtures/s3';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { CATALOG_BAGS_FILE, CATALOG_URLS_FILE } from '../layout.js';
import { indexBags } from './index-bags.js';
import { catalogFrames, copyMcapFixture, duckRows, sqlPath, writeCatalogBag } from '../testing/catalog-bags.js';

/** The same bags on a real S3 server (moto) and on disk: the same catalog rows but for location, ETag and mtime. */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'vlink-catalog-s3-'));
const root = join(dir, 'fleet');
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

const PLACE_COLUMNS = new Set(['location', 'etag', 'modified', 'indexed_at']);

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true })
    .map(String)
    .filter((name) => statSync(join(folder, name)).isFile());
}

describe('indexBags over s3://', { skip }, () => {
  const s3 = () => s3Options({ cacheDir: join(dir, 'cache') });
  before(async () => {
    await writeCatalogBag(join(root, 'drive.vdb'), catalogFrames(20, 0));
    await writeCatalogBag(join(root, 'drive.vcap'), catalogFrames(22, 500));
    await writeCatalogBag(join(root, 'split', 'run.vdbx'), catalogFrames(30, 1_000));
    await writeCatalogBag(join(root, 'split', 'run.vcapx'), catalogFrames(26, 1_500));
    copyMcapFixture(join(root, 'foreign', 'protobuf.mcap'));
    // Named as Apollo's recorder names a recording's files: a bag only by the backend's numbered segments.
    copyFileSync(fixturePath('foreign', 'apollo', 'sensors.record'), join(root, 'foreign', 'sensors.record.00000'));
    const client = new S3Client(s3());
    await client.createBucket('lake');
    for (const name of filesUnder(root))
      await client.put(
        { bucket: 'lake', key: `recordings/${relative(root, join(root, name)).split(sep).join('/')}` },
        readFileSync(join(root, name)),
      );
  });

  test('the rows equal those of the local folder, except location, ETag and mtime', async () => {
    const local = await indexBags([root], join(dir, 'local'));
    const remote = await indexBags(['s3://lake/recordings/'], join(dir, 'remote'), { s3: s3() });
    assert.deepEqual(remote.failed, []);
    assert.equal(remote.added, 6);
    assert.equal(remote.bags, local.bags);
    for (const file of [CATALOG_BAGS_FILE, CATALOG_URLS_FILE]) {
      const sql = (at: string) => `SELECT * FROM read_parquet(${sqlPath(at, file)}) ORDER BY ALL`;
      const strip = (rows: Record<string, unknown>[]) =>
        rows.map((r) => Object.fromEntries(Object.entries(r).filter(([k]) => !PLACE_COLUMNS.has(k))));
      const [a, b] = [await duckRows(sql(join(dir, 'local'))), await duckRows(sql(join(dir, 'remote')))];
      assert.ok(a.length >= 6);
      assert.deepEqual(strip(b), strip(a), file);
    }
    const rows = await duckRows(
      `SELECT bag_id, location, etag, modified FROM read_parquet(${sqlPath(join(dir, 'remote'), CATALOG_BAGS_FILE)}) ORDER BY bag_id`,
    );
    for (const row of rows) {
      assert.equal(row['location'], `s3://lake/recordings/${row['bag_id']}`);
      assert.match(String(row['etag']), /^"[0-9a-f]{32}"/);
      assert.ok(row['modified'] instanceof Date);
    }
    const split = rows.find((r) => r['bag_id'] === 'split/run.vcapx')!;
    assert.ok(String(split['etag']).split('+').length >= 3, 'a split recording: the ETags of manifest and segments');
  });

  test('a second run opens nothing; a re-uploaded object is updated', async () => {
    const catalog = join(dir, 'remote');
    const again = await indexBags(['s3://lake/recordings'], catalog, { s3: s3() });
    assert.equal(again.unchanged, 6);
    assert.equal(again.added + again.updated + again.removed, 0);
    const frames = catalogFrames(12, 9_000);
    await writeCatalogBag(join(dir, 'new.vdb'), frames);
    await new S3Client(s3()).put({ bucket: 'lake', key: 'recordings/drive.vdb' }, readFileSync(join(dir, 'new.vdb')));
    const changed = await indexBags(['s3://lake/recordings'], catalog, { s3: s3() });
    assert.equal(changed.updated, 1);
    assert.equal(changed.unchanged, 5);
    const [row] = await duckRows(
      `SELECT message_count FROM read_parquet(${sqlPath(catalog, CATALOG_BAGS_FILE)}) WHERE bag_id = 'drive.vdb'`,
    );
    assert.equal(Number(row!['message_count']), frames.length);
  });
});
