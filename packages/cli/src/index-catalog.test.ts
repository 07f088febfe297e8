import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { runCli, SLOW, START_MS, tempDir, writeBag } from './testing/harness.js';

/** `vlink-bag index`: the catalog rows equal `vlink-bag info --json` of each bag; failures set the exit code. */
const tmp = tempDir();
const root = tmp.path('fleet');
const catalog = tmp.path('catalog');
const BAGS = ['drive.vdb', 'drive.vcap', 'split/run.vdbx', 'split/run.vcapx'];

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;

before(async () => {
  mkdirSync(join(root, 'split'), { recursive: true });
  for (const id of BAGS) await writeBag(join(root, id));
});
after(() => tmp.cleanup());

async function query(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('vlink-bag index', () => {
  test('--json: the report validates against its schema; rows equal info --json', SLOW, async () => {
    const result = await runCli(['index', root, '-o', catalog, '--json'], { timeoutMs: 55_000 });
    assert.equal(result.code, 0, result.stderr);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    const check = new Ajv2020({ allErrors: true, strict: false }).compile(JSON_SCHEMAS['index']!);
    assert.ok(check(report), JSON.stringify(check.errors));
    assert.deepEqual(
      { ...report, catalog: undefined, urls: undefined },
      {
        catalog: undefined,
        urls: undefined,
        added: 4,
        updated: 0,
        unchanged: 0,
        removed: 0,
        failed: [],
        bags: 4,
      },
    );
    const bags = await query(
      `SELECT *, epoch_us(start_time) AS start_us, epoch_us(end_time) AS end_us FROM read_parquet('${join(catalog, 'bags.parquet')}') ORDER BY bag_id`,
    );
    const urls = await query(`SELECT * FROM read_parquet('${join(catalog, 'urls.parquet')}')`);
    assert.deepEqual(
      bags.map((b) => b['bag_id']),
      [...BAGS].sort(),
    );
    for (const row of bags) {
      const info = JSON.parse((await runCli(['info', join(root, String(row['bag_id'])), '--json'])).stdout);
      assert.equal(row['format'], info.format);
      assert.equal(Number(row['size_bytes']), info.fileSize);
      assert.equal(Number(row['message_count']), info.messageCount);
      assert.equal(row['url_count'], info.urls.length);
      const first = Math.min(...info.streams.map((s: { firstLogUs: number }) => s.firstLogUs));
      const last = Math.max(...info.streams.map((s: { lastLogUs: number }) => s.lastLogUs));
      assert.equal(Number(row['start_us']), START_MS * 1000 + first);
      assert.equal(Number(row['end_us']), START_MS * 1000 + last);
      assert.equal(Number(row['duration_us']), last - first);
      const header = JSON.parse(String(row['header_json']));
      for (const key of ['format', 'version', 'tagName', 'processName', 'hasCompleted', 'recording', 'errors'])
        assert.deepEqual(header[key], info[key], `${row['bag_id']} ${key}`);
      const own = urls.filter((u) => u['bag_id'] === row['bag_id']);
      assert.equal(own.length, info.urls.length);
      for (const meta of info.urls) {
        const u = own.find((r) => r['url'] === meta.url && (r['action'] ?? undefined) === meta.action);
        assert.ok(u, `${row['bag_id']} ${meta.url}`);
        assert.deepEqual(
          [u['type'], u['ser'], Number(u['message_count']), Number(u['bytes'])],
          [meta.type, meta.ser, meta.count, meta.size],
        );
      }
    }
  });

  test(
    'counts on stdout; an unreadable bag is named on stderr and exits 1; -q prints only failures',
    SLOW,
    async () => {
      writeFileSync(join(root, 'broken.vdb'), 'not a SQLite database '.repeat(100));
      const result = await runCli(['index', root, '-o', catalog], { timeoutMs: 55_000 });
      assert.equal(result.code, 1);
      assert.match(result.stdout, / 4 bags, \d+ urls \(added 0, updated 0, unchanged 4, removed 0, failed 1\)\n$/);
      assert.match(result.stderr, /^vlink-bag index: .*broken\.vdb: [A-Z_]+: /);
      const quiet = await runCli(['index', root, '-o', catalog, '-q'], { timeoutMs: 55_000 });
      assert.equal(quiet.code, 1);
      assert.equal(quiet.stdout, '');
      assert.match(quiet.stderr, /broken\.vdb/);
    },
  );
});
