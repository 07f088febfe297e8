import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { ndjson, runCli, SLOW, START_MS, tempDir, writeBag } from './testing/harness.js';

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });

const tmp = tempDir();
after(() => tmp.cleanup());
const bags = [tmp.path('fixture.vdb'), tmp.path('fixture.vcap')];
const out = tmp.path('lake');

/** The exported rows of one bag, in replay order, as DuckDB reads the hive-partitioned dataset. */
async function exportedRows(bagId: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const rows: Record<string, unknown>[] = [];
    // url by url: each url has its own `data` STRUCT
    for (const folder of readdirSync(join(out, 'messages'))) {
      const glob = join(out, 'messages', folder, '**', '*.parquet').replaceAll("'", "''");
      const result = await connection.runAndReadAll(
        `SELECT *, epoch_us(log_time) AS log_us, epoch_us(publish_time) AS pub_us FROM read_parquet('${glob}', ` +
          `hive_partitioning = true, hive_types_autocast = false) WHERE bag_id = '${bagId.replaceAll("'", "''")}'`,
      );
      rows.push(...result.getRowObjectsJS());
    }
    return rows.sort((a, b) => Number(a['seq']) - Number(b['seq']));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('vlink-bag export --format parquet', () => {
  before(async () => {
    for (const bag of bags) await writeBag(bag);
  });

  test('the export agrees with `cat --decode`: counts, times, payloads, decoded fields', SLOW, async () => {
    const result = await runCli(['export', ...bags, '--format', 'parquet', '-o', out, '--json'], { timeoutMs: 90_000 });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Record<string, unknown> & { perUrl: Record<string, never> };
    assert.ok(ajv.compile(JSON_SCHEMAS['export']!)(report), JSON.stringify(ajv.errors));
    assert.equal(report['bags'], 2);
    assert.equal(report['messages'], 400);
    for (const bag of bags) {
      const cat = await runCli(['cat', bag, '--decode']);
      assert.equal(cat.code, 0, cat.stderr);
      const frames = ndjson(cat.stdout);
      const rows = await exportedRows(bag);
      assert.equal(rows.length, frames.length);
      let decoded = 0;
      frames.forEach((frame, i) => {
        const row = rows[i]!;
        assert.equal(row['url'], frame['url']);
        assert.equal(Number(row['seq']), i);
        assert.equal(Number(row['log_us']), START_MS * 1000 + (frame['timestamp'] as number), `#${i} log time`);
        assert.equal(Number(row['pub_us']), START_MS * 1000 + (frame['publishTime'] as number), `#${i} publish time`);
        assert.equal(row['action'], frame['action']);
        assert.equal(row['ser'], frame['serType']);
        assert.equal(Number(row['size']), frame['size']);
        assert.equal(Buffer.from(row['payload'] as Uint8Array).toString('base64'), frame['data'], `#${i} payload`);
        const data = row['data'] as Record<string, unknown> | null | undefined;
        const value = frame['decoded'];
        if (data && typeof value === 'object' && value !== null) {
          // every field `cat --decode` prints, with the same value (the export also has proto3 defaults cat omits)
          for (const [key, field] of Object.entries(value)) assert.deepEqual(data[key], field, `#${i} ${key}`);
          decoded++;
        } else {
          assert.ok(frame['url'] !== '/camera' && frame['url'] !== '/imu', `#${i} ${String(frame['url'])} decoded`);
        }
      });
      assert.equal(decoded, frames.filter((f) => f['url'] === '/camera' || f['url'] === '/imu').length);
    }
    // /rpc's types have no embedded schema: exported with data NULL, counted, never dropped
    assert.ok((report.perUrl['/rpc'] as { decodeFailures: number }).decodeFailures > 0);
  });

  test('a rerun skips the bags already exported', SLOW, async () => {
    const result = await runCli(['export', ...bags, '-o', out, '--json']);
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as { skipped: number; files: number; messages: number };
    assert.equal(report.skipped, 2);
    assert.equal(report.files, 0);
    assert.equal(report.messages, 0);
    assert.equal((await exportedRows(bags[0]!)).length, 200);
  });
});
