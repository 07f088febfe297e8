import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { s3TestServer } from '@vlink/fixtures/s3';
import { parseS3Url, S3Client } from '@vlink/bag-s3';
import { exportedRows, exportFrames, START_MS, writeExportBag } from '../testing/export-bags.js';
import { exportMessages } from './export-messages.js';

/** Bags in the four formats on a real S3 server (moto on loopback), exported from their `s3://` urls. */
const { skip, options: s3Options } = await s3TestServer();
const dir = mkdtempSync(join(tmpdir(), 'lake-export-s3-'));
after(() => {
  rmSync(dir, { recursive: true, force: true });
});
const FRAMES = exportFrames(24);
const FORMATS = ['vdb', 'vdbx', 'vcap', 'vcapx'] as const;

describe('exportMessages from s3:// urls', { skip }, () => {
  before(async () => {
    const local = join(dir, 'bags');
    for (const format of FORMATS) await writeExportBag(join(local, `drive.${format}`), FRAMES);
    const client = new S3Client(s3Options());
    await client.createBucket('fleet');
    // every file the writers made (split formats may write several), under the same names
    for (const name of readdirSync(local)) {
      await client.put(parseS3Url(`s3://fleet/car-1/${name}`), readFileSync(join(local, name)));
    }
  });

  test('every message of every format, with its times and payload, bag_id = the url as given', async () => {
    const bags = FORMATS.map((format) => `s3://fleet/car-1/drive.${format}`);
    const out = join(dir, 'lake');
    const report = await exportMessages(bags, out, { s3: s3Options() });
    assert.equal(report.messages, FORMATS.length * FRAMES.length);
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const glob = join(out, 'messages', '**', '*.parquet').replaceAll("'", "''");
    const result = await connection.runAndReadAll(
      `SELECT bag_id, seq, url, epoch_us(log_time) AS log_us, epoch_us(publish_time) AS pub_us, payload ` +
        `FROM read_parquet('${glob}', hive_partitioning = true, hive_types_autocast = false) ORDER BY bag_id, seq`,
    );
    const rows = result.getRowObjectsJS();
    connection.closeSync();
    instance.closeSync();
    for (const bag of bags) {
      const got = rows.filter((row) => row['bag_id'] === bag);
      assert.equal(got.length, FRAMES.length, bag);
      FRAMES.forEach(({ frame }, i) => {
        assert.equal(got[i]!['url'], frame.url);
        assert.equal(Number(got[i]!['log_us']), START_MS * 1000 + frame.timestamp);
        assert.equal(Number(got[i]!['pub_us']), START_MS * 1000 + frame.publishTime!);
        assert.deepEqual(new Uint8Array(got[i]!['payload'] as Uint8Array), frame.data);
      });
    }
  });
});

describe('exportMessages from s3://: a rerun compares the object with its done marker', { skip }, () => {
  test('an unchanged object is skipped, a rewritten one exported again (its ETag and size differ)', async () => {
    const client = new S3Client(s3Options());
    const local = join(dir, 'changing.vcap');
    await writeExportBag(local, exportFrames(12));
    await client.put(parseS3Url('s3://fleet/car-2/run.vcap'), readFileSync(local));
    const out = join(dir, 'lake-changing');
    const bag = 's3://fleet/car-2/run.vcap';
    assert.equal((await exportMessages([bag], out, { s3: s3Options() })).messages, 12);
    const again = await exportMessages([bag], out, { s3: s3Options() });
    assert.deepEqual(
      again.perBag.map((b) => [b.skipped, b.replaced]),
      [[true, false]],
    );
    await writeExportBag(local, exportFrames(20));
    await client.put(parseS3Url('s3://fleet/car-2/run.vcap'), readFileSync(local));
    const changed = await exportMessages([bag], out, { s3: s3Options() });
    assert.deepEqual(
      changed.perBag.map((b) => [b.skipped, b.replaced, b.messages]),
      [[false, true, 20]],
    );
    const rows = await exportedRows(out);
    assert.equal(rows.length, 20);
  });
});
