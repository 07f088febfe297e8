import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { QUERY_ANSWER_BYTES, queryFormatOf } from './commands/query.js';
import { JSON_SCHEMAS } from './lib/json-schemas.js';
import { type Fleet, lakeFleet } from '@vlink/fixtures/lake';
import { runCli, tempDir } from './testing/harness.js';

type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const ajv = new Ajv2020({ allErrors: true, strict: false });

const tmp = tempDir();
after(() => tmp.cleanup());
const BAGS = 12;
let gen: Fleet;
let folders: { catalog: string; export: string };

before(async () => {
  gen = await lakeFleet();
  folders = await gen.writeFleet(tmp.path('lake'), BAGS);
});

const lake = () => ['--catalog', folders.catalog, '--export', folders.export];
const PER_BAG = 'SELECT bag_id, count(*) AS n FROM messages GROUP BY bag_id ORDER BY bag_id';
const expected = () =>
  Array.from(
    { length: BAGS },
    (_, i) => [gen.fleet.bagId(i), gen.fleet.imuCount(i) + gen.fleet.lidarCount(i)] as const,
  ).sort((a, b) => a[0].localeCompare(b[0]));

describe('vlink-bag query', () => {
  test('table on stdout: names, types, rows and the count', async () => {
    const r = await runCli(['query', PER_BAG, ...lake()]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^bag_id\s+n$/);
    assert.match(lines[1] ?? '', /^VARCHAR\s+BIGINT$/);
    const rows = lines.slice(3, -1).map((line) => line.split(/\s+/));
    assert.deepEqual(
      rows,
      expected().map(([id, n]) => [id, String(n)]),
    );
    assert.equal(lines.at(-1), `${BAGS} rows`);
  });

  test('CSV, JSON and NDJSON (stdout and -o), with --limit', async () => {
    const csv = await runCli(['query', PER_BAG, ...lake(), '--format', 'csv']);
    assert.equal(
      csv.stdout,
      `bag_id,n\r\n${expected()
        .map(([id, n]) => `${id},${n}\r\n`)
        .join('')}`,
    );
    const file = tmp.path('a.json');
    const json = await runCli(['query', PER_BAG, ...lake(), '-o', file]);
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(
      JSON.parse(readFileSync(file, 'utf8')),
      expected().map(([bag_id, n]) => ({ bag_id, n })),
    );
    const nd = await runCli(['query', PER_BAG, ...lake(), '--format', 'ndjson', '--limit', '2']);
    assert.deepEqual(
      nd.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
      expected()
        .slice(0, 2)
        .map(([bag_id, n]) => ({ bag_id, n })),
    );
    assert.match(nd.stderr, /only the first 2 rows: more were left out/);
    const exists = await runCli(['query', PER_BAG, ...lake(), '-o', file]);
    assert.equal(exists.code, 1);
    assert.match(exists.stderr, /exists; use --force to overwrite/);
  });

  test('Parquet with -o, read back by DuckDB with its types', async () => {
    const file = tmp.path('answer.parquet');
    const r = await runCli([
      'query',
      'SELECT bag_id, message_count, start_time FROM bags ORDER BY bag_id',
      '--catalog',
      folders.catalog,
      '-o',
      file,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, `${BAGS} rows written to ${file}\n`);
    const instance = await DuckDBInstance.create(':memory:');
    const db = await instance.connect();
    try {
      const back = (
        await db.runAndReadAll(`SELECT bag_id, message_count, typeof(start_time) FROM '${file}'`)
      ).getRowsJS();
      assert.deepEqual(
        back,
        expected().map(([id, n]) => [id, BigInt(n), 'TIMESTAMP']),
      );
    } finally {
      db.closeSync();
      instance.closeSync();
    }
    assert.equal((await runCli(['query', 'SELECT 1', '--catalog', folders.catalog, '--format', 'parquet'])).code, 2);
  });

  test('errors: bad SQL, a refused read, a missing view or folder, no folder at all', async () => {
    const bad = await runCli(['query', 'SELEC 1', ...lake()]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /Parser Error: syntax error at or near "SELEC"/);
    const secret = tmp.path('secret.csv');
    writeFileSync(secret, 'a\n1\n');
    const outside = await runCli(['query', `SELECT * FROM read_csv('${secret}')`, ...lake()]);
    assert.equal(outside.code, 1);
    assert.match(outside.stderr, /Permission Error/);
    const noView = await runCli(['query', 'SELECT * FROM messages', '--catalog', folders.catalog]);
    assert.match(noView.stderr, /no view messages: the lake was opened without an export folder/);
    const missing = await runCli(['query', 'SELECT 1', '--catalog', tmp.path('nope')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /the catalog folder does not exist/);
    const none = await runCli(['query', 'SELECT 1']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /give --catalog <dir> and\/or --export <dir>/);
  });

  test('--json: one document with columns, rows and truncated, valid against its schema', async () => {
    const r = await runCli(['query', PER_BAG, ...lake(), '--json', '--limit', '3']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout);
    assert.deepEqual(doc, {
      columns: [
        { name: 'bag_id', type: 'VARCHAR' },
        { name: 'n', type: 'BIGINT' },
      ],
      rows: expected().slice(0, 3),
      truncated: true,
    });
    const check = ajv.compile(JSON_SCHEMAS['query']!);
    assert.ok(check(doc), JSON.stringify(check.errors));
    assert.equal(check({ ...doc, truncated: 'no' }), false);
  });

  test('a text answer past QUERY_ANSWER_BYTES of JSON stops with the reason, before filling the heap', async () => {
    const rows = Math.ceil(QUERY_ANSWER_BYTES / 1_000_000) + 6;
    const sql = `SELECT repeat('x', 1000000) AS s FROM range(${rows})`;
    const r = await runCli(['query', sql, '--catalog', folders.catalog, '--format', 'csv']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`the answer is over ${QUERY_ANSWER_BYTES} bytes of JSON \\(at row \\d+\\)`));
    assert.equal(r.stdout, '');
  });

  test('the format follows --format, else the extension of -o', () => {
    assert.equal(queryFormatOf({}), 'table');
    assert.equal(queryFormatOf({ output: 'x.CSV' }), 'csv');
    assert.equal(queryFormatOf({ output: 'x.jsonl' }), 'ndjson');
    assert.equal(queryFormatOf({ output: 'x.parquet', format: 'json' }), 'json');
  });
});
