import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { writeFleet } from '../testing/query-fixture.js';
import { toCsv, toJsonArray, toNdjson, toTable } from './format.js';
import { type LakeResult, openLake } from './lake.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-lake-formats-'));
let folders: { catalog: string; export: string };
const SQL = `SELECT bag_id, message_count, start_time, tags_json, NULL AS nothing, [1, 2] AS list
  FROM bags ORDER BY bag_id LIMIT 2`;
let result: LakeResult;

before(async () => {
  folders = await writeFleet(join(dir, 'lake'), 4);
  const lake = await openLake(folders);
  try {
    result = await lake.query(SQL);
  } finally {
    lake.close();
  }
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Reads text or a file back with a separate DuckDB (no lock), to check what other tools see. */
async function readBack(sql: string): Promise<unknown[][]> {
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    return (await db.runAndReadAll(sql)).getRowsJS();
  } finally {
    db.closeSync();
    instance.closeSync();
  }
}

describe('lake output formats', () => {
  test('CSV: header, quoting of JSON text, empty NULL; read back by DuckDB', async () => {
    const csv = toCsv(result);
    const lines = csv.split('\r\n');
    assert.equal(lines[0], 'bag_id,message_count,start_time,tags_json,nothing,list');
    assert.equal(lines[1], 'fleet/v0/run-0.vcap,70,2026-12-01T00:00:00.000000Z,"{""vehicle"":""v0""}",,"[1,2]"');
    const file = join(dir, 'a.csv');
    writeFileSync(file, csv);
    const back = await readBack(`SELECT bag_id, message_count, tags_json FROM read_csv('${file}', header = true)`);
    assert.deepEqual(back, [
      ['fleet/v0/run-0.vcap', 70n, '{"vehicle":"v0"}'],
      ['fleet/v1/run-1.vcap', 72n, '{"vehicle":"v1"}'],
    ]);
  });

  test('JSON array and NDJSON: row objects that parse back to the same values', () => {
    const expected = [
      {
        bag_id: 'fleet/v0/run-0.vcap',
        message_count: 70,
        start_time: '2026-12-01T00:00:00.000000Z',
        tags_json: '{"vehicle":"v0"}',
        nothing: null,
        list: [1, 2],
      },
      {
        bag_id: 'fleet/v1/run-1.vcap',
        message_count: 72,
        start_time: '2026-12-01T01:00:00.000000Z',
        tags_json: '{"vehicle":"v1"}',
        nothing: null,
        list: [1, 2],
      },
    ];
    assert.deepEqual(JSON.parse(toJsonArray(result)), expected);
    const lines = toNdjson(result).trimEnd().split('\n');
    assert.deepEqual(
      lines.map((line) => JSON.parse(line)),
      expected,
    );
  });

  test('table: names, types, aligned numbers, NULL and the row count', () => {
    const text = toTable(result);
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^bag_id\s+message_count\s+start_time\s+tags_json\s+nothing\s+list$/);
    assert.match(lines[1] ?? '', /^VARCHAR\s+BIGINT\s+TIMESTAMP\s+VARCHAR\s+INTEGER\s+INTEGER\[\]$/);
    assert.match(
      lines[3] ?? '',
      /^fleet\/v0\/run-0\.vcap\s+70\s+2026-12-01T00:00:00\.000000Z\s+\{"vehicle":"v0"\}\s+NULL\s+\[1,2\]$/,
    );
    assert.equal(lines.at(-1), '2 rows');
    assert.equal(
      toTable({ ...result, truncated: true })
        .trimEnd()
        .split('\n')
        .at(-1),
      '2 rows (more left out: raise the limit)',
    );
  });

  test('Parquet: COPY of the answer to an allowed file, read back with its types', async () => {
    const file = join(dir, 'answer.parquet');
    const lake = await openLake({ ...folders, outputFiles: [file] });
    try {
      assert.equal(
        await lake.writeParquet('SELECT bag_id, message_count, start_time FROM bags ORDER BY bag_id', file),
        4,
      );
    } finally {
      lake.close();
    }
    const back = await readBack(`SELECT bag_id, message_count, typeof(start_time), start_time::VARCHAR FROM '${file}'`);
    assert.deepEqual(back[3], ['fleet/v3/run-3.vcap', 76n, 'TIMESTAMP', '2026-12-01 03:00:00']);
  });
});
