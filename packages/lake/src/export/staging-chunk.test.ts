import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, test } from '@vlink/fixtures/test';
import { PAYLOAD_FUNCTION, PayloadSource } from './payload-store.js';
import { DataSource, STAGING_COLUMNS, StagingChunk } from './staging-chunk.js';

/** A payload whose length and bytes depend on the row: empty, inlined (≤ 12 bytes) and heap-held ones in turn. */
function payloadOf(i: number): Uint8Array {
  const length = [0, 5, 13, 3000][i % 4]!;
  return new Uint8Array(length).fill((i * 7) & 0xff);
}

/** Where each row's `data` comes from: none, its record, or (with a stale flag to overwrite) its payload. */
const sourceOf = (i: number): DataSource =>
  i % 3 === 0 ? DataSource.None : i % 5 === 1 ? DataSource.Payload : DataSource.Record;

/** NULL publish times in the first chunk and the last, none in the second: a reused chunk's stale NULLs would show. */
const hasPublishTime = (i: number) => !((i >= 700 && i < 1400) || i >= 2048 * 2 + 100);

describe('staging chunk', () => {
  test('rows read back as staged across full and partial chunks (the chunk is reused)', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const source = new PayloadSource();
      source.register(connection);
      const payloads = source.store();
      await connection.run(`CREATE TABLE staged (${STAGING_COLUMNS})`);
      const appender = await connection.createAppender('staged');
      const types = Array.from({ length: appender.columnCount }, (_, i) => appender.columnType(i));
      const chunk = new StagingChunk(types, undefined);
      const count = 2048 * 2 + 300;
      for (let i = 0; i < count; i++) {
        const pubUs = hasPublishTime(i) ? i * 10 - 3 : undefined;
        const source = sourceOf(i);
        const record = source === DataSource.Record ? { i } : undefined;
        const ref = payloads.add(payloadOf(i));
        if (chunk.add(i, i * 10, pubUs, i % 2, ref, source, record, (r) => JSON.stringify(r))) {
          chunk.appendTo(appender);
        }
      }
      chunk.appendTo(appender);
      appender.closeSync();
      payloads.seal();
      const rows = (
        await connection.runAndReadAll(
          `SELECT seq, log_us, pub_us, kind, ${PAYLOAD_FUNCTION}(${payloads.id}::UINTEGER, payload_ref) AS payload, ` +
            'data_json, data_in_payload FROM staged',
        )
      ).getRowObjectsJS();
      assert.equal(rows.length, count);
      rows.forEach((row, i) => {
        assert.equal(row.seq, i);
        assert.equal(row.log_us, i * 10);
        assert.equal(row.pub_us, hasPublishTime(i) ? i * 10 - 3 : null, `row ${i} pub_us`);
        assert.equal(row.kind, i % 2);
        assert.deepEqual([...(row.payload as Uint8Array)], [...payloadOf(i)], `row ${i} payload`);
        const source = sourceOf(i);
        assert.equal(row.data_json, source === DataSource.Record ? JSON.stringify({ i }) : null, `row ${i} data_json`);
        assert.equal(row.data_in_payload, source === DataSource.Payload, `row ${i} data_in_payload`);
      });
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });
});
