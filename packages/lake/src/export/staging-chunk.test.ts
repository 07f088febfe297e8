import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, test } from '@vlink/fixtures/test';
import { STAGING_COLUMNS, StagingChunk } from './staging-chunk.js';

/** A payload whose length and bytes depend on the row: empty, inlined (≤ 12 bytes) and heap-held ones in turn. */
function payloadOf(i: number): Uint8Array {
  const length = [0, 5, 13, 3000][i % 4]!;
  return new Uint8Array(length).fill((i * 7) & 0xff);
}

/** NULL publish times in the first chunk and the last, none in the second: a reused chunk's stale NULLs would show. */
const hasPublishTime = (i: number) => !((i >= 700 && i < 1400) || i >= 2048 * 2 + 100);

describe('staging chunk', () => {
  test('rows read back as staged across full and partial chunks (the chunk is reused)', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run(`CREATE TABLE staged (${STAGING_COLUMNS})`);
      const appender = await connection.createAppender('staged');
      const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
      const chunk = new StagingChunk(types, undefined);
      const count = 2048 * 2 + 300;
      for (let i = 0; i < count; i++) {
        const pubUs = hasPublishTime(i) ? i * 10 - 3 : undefined;
        const record = i % 3 === 0 ? undefined : { i };
        if (chunk.add(i, i * 10, pubUs, i % 2, payloadOf(i), record, (r) => JSON.stringify(r))) {
          chunk.appendTo(appender);
        }
      }
      chunk.appendTo(appender);
      appender.closeSync();
      const rows = (
        await connection.runAndReadAll('SELECT seq, log_us, pub_us, kind, payload.p AS payload, data_json FROM staged')
      ).getRowObjectsJS();
      assert.equal(rows.length, count);
      rows.forEach((row, i) => {
        assert.equal(row.seq, i);
        assert.equal(row.log_us, i * 10);
        assert.equal(row.pub_us, hasPublishTime(i) ? i * 10 - 3 : null, `row ${i} pub_us`);
        assert.equal(row.kind, i % 2);
        assert.deepEqual([...(row.payload as Uint8Array)], [...payloadOf(i)], `row ${i} payload`);
        assert.equal(row.data_json, i % 3 === 0 ? null : JSON.stringify({ i }), `row ${i} data_json`);
      });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
