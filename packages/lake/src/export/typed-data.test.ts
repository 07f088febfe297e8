import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, test } from '@vlink/fixtures/test';
import { asRecord, recordJson, type Structure, structureOf } from './data-structure.js';
import { sqlString } from './duckdb.js';
import { DataSource, STAGING_COLUMNS, StagingChunk } from './staging-chunk.js';
import { typedData } from './typed-data.js';

/** The first record gives the structure (as in an export); the others try every value the typed writer may meet. */
const RECORDS: unknown[] = [
  { a: 1.5, s: 'x', b: true, o: { x: 1, y: 'q' } },
  { a: -0, s: 'nul \u0000 inside', b: false, o: null },
  { a: '12', s: 5, b: 1, o: { x: '1' } },
  { a: 123456789012345678901234n, s: '😀 emoji', o: { y: null } },
  { a: 2n ** 60n, s: 'pair \ud83d\ude00', b: null, o: [1, 2] },
  { a: Number.NaN, s: '', o: {} },
  { a: Number.POSITIVE_INFINITY, s: 'é', o: { x: 1e-7, y: 'z', extra: 3 } },
  { a: 42n, extra: { z: 1 } },
  { A: 5, S: 'case differs' },
  { a: 0.1, s: 'fits', b: true, o: { x: -0, y: '' } },
  { value: 3 },
  { a: 2 ** 53 + 2, s: 'past 2^53', b: true, o: { x: Number.MAX_VALUE, y: 'big' } },
];

/** Rows staged through StagingChunk (typed where the writer can, JSON text where not) and read back as `data`. */
async function viaStaging(structure: Structure, records: readonly unknown[]): Promise<Record<string, unknown>[]> {
  const typed = typedData(structure);
  assert.ok(typed, 'the structure has a typed writer');
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    await connection.run(`CREATE TABLE staged (${STAGING_COLUMNS}, data ${typed.type})`);
    const appender = await connection.createAppender('staged');
    const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
    const chunk = new StagingChunk(types, typed);
    // More rows than one chunk holds, so full chunks and a last partial one are both appended.
    const count = 2048 * 2 + 100;
    for (let i = 0; i < count; i++) {
      const full = chunk.add(
        i,
        i * 10,
        i % 3 === 0 ? undefined : i,
        0,
        i,
        DataSource.Record,
        records[i % records.length],
        (r) => recordJson(r as Record<string, unknown>),
      );
      if (full) chunk.appendTo(appender);
    }
    chunk.appendTo(appender);
    appender.closeSync();
    // The reference: each row's JSON text, as the export stages a record the typed writer cannot take.
    await connection.run('CREATE TABLE refs (reference VARCHAR)');
    const refs = await connection.createAppender('refs');
    for (let i = 0; i < count; i++) {
      refs.appendVarchar(recordJson(asRecord(records[i % records.length])));
      refs.endRow();
    }
    refs.closeSync();
    const structureText = sqlString(JSON.stringify(structure));
    const result = await connection.runAndReadAll(
      `SELECT seq, log_us, pub_us, payload_ref, CASE WHEN data_json IS NULL THEN data ELSE json_transform(data_json, ${structureText}) END AS data, ` +
        `json_transform(reference, ${structureText}) AS reference FROM staged POSITIONAL JOIN refs`,
    );
    return result.getRowObjectsJS();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('typed data', () => {
  test('a structure with a list or a JSON leaf has no typed writer', () => {
    assert.equal(typedData({ a: ['DOUBLE'] }), undefined);
    assert.equal(typedData({ a: 'JSON' }), undefined);
    assert.equal(typedData({ a: { b: ['VARCHAR'] } }), undefined);
    assert.equal(
      typedData({ a: 'DOUBLE', 'q "r"': { c: 'BOOLEAN' } })?.type,
      'STRUCT("a" DOUBLE, "q ""r""" STRUCT("c" BOOLEAN))',
    );
  });

  test('staged rows give exactly what json_transform gives of their JSON text', { timeout: 60_000 }, async () => {
    const structure = structureOf(asRecord(RECORDS[0]));
    assert.ok(structure);
    const rows = await viaStaging(structure, RECORDS);
    assert.equal(rows.length, 2048 * 2 + 100);
    rows.forEach((row, i) => {
      assert.equal(row.seq, i);
      assert.equal(row.log_us, i * 10);
      assert.equal(row.pub_us, i % 3 === 0 ? null : i);
      assert.equal(row.payload_ref, i);
      assert.deepEqual(row.data, row.reference, `row ${i}: ${recordJson(asRecord(RECORDS[i % RECORDS.length]))}`);
    });
    // and the values are the ones expected, not merely equal to each other
    assert.deepEqual(rows[0]!.data, { a: 1.5, s: 'x', b: true, o: { x: 1, y: 'q' } });
    assert.deepEqual(rows[1]!.data, { a: 0, s: 'nul \u0000 inside', b: false, o: null });
    assert.ok(Object.is((rows[1]!.data as { a: number }).a, 0), '−0 is written as 0, as in JSON text');
    assert.deepEqual(rows[5]!.data, { a: null, s: '', b: null, o: { x: null, y: null } });
    assert.deepEqual(rows[7]!.data, { a: 42, s: null, b: null, o: null });
    assert.deepEqual(rows[8]!.data, { a: null, s: null, b: null, o: null });
  });
});
