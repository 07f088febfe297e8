import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, test } from '@vlink/fixtures/test';
import { PayloadSource } from './payload-store.js';
import { StagedRowsSet, stagedRowsSql } from './staged-rows.js';

/** A payload whose length and bytes depend on the row: empty, inlined, heap-held, and now and then a large one. */
function payloadOf(i: number): Uint8Array {
  const length = i % 1000 === 7 ? 40_000 + i : [0, 5, 13, 3000][i % 4]!;
  return new Uint8Array(length).fill((i * 7) & 0xff);
}

const textOf = (i: number): string | undefined =>
  i % 3 === 1 ? JSON.stringify({ i, s: 'é😀'.repeat(i % 5) }) : undefined;
const hasPublishTime = (i: number) => !((i >= 700 && i < 1400) || i % 11 === 0);
const COUNT = 2048 * 2 + 300;

describe('staged rows', () => {
  test('rows read back as staged through vlink_row, across chunks, filtered and reordered', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const set = new StagedRowsSet(new PayloadSource());
      set.register(connection);
      const rows = set.rows();
      const encoder = new TextEncoder();
      for (let i = 0; i < COUNT; i++) {
        const text = textOf(i);
        const pubUs = hasPublishTime(i) ? i * 10 - 3 : undefined;
        rows.add(
          i,
          i * 10,
          pubUs,
          i % 3,
          payloadOf(i),
          i % 5 === 2,
          text === undefined ? undefined : encoder.encode(text),
        );
      }
      rows.seal();
      const check = async (sql: string, expected: number) => {
        const read = (await connection.runAndReadAll(sql)).getRowObjectsJS();
        assert.equal(read.length, expected);
        for (const row of read) {
          const i = row.seq as number;
          assert.equal(row.log_us, i * 10);
          assert.equal(row.pub_us, hasPublishTime(i) ? i * 10 - 3 : null, `row ${i} pub_us`);
          assert.equal(row.kind, i % 3);
          assert.deepEqual([...(row.payload_bytes as Uint8Array)], [...payloadOf(i)], `row ${i} payload`);
          assert.equal(row.data_json, textOf(i) ?? null, `row ${i} data_json`);
          assert.equal(row.data_in_payload, i % 5 === 2, `row ${i} data_in_payload`);
        }
      };
      const staged = stagedRowsSql(rows);
      await check(`SELECT * FROM ${staged}`, COUNT);
      await check(`SELECT * FROM ${staged} WHERE seq % 7 = 3 ORDER BY seq DESC`, Math.ceil((COUNT - 3) / 7));
      rows.release();
      await assert.rejects(connection.run(`SELECT * FROM ${staged}`), /staged rows .* are gone/);
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
