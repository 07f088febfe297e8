import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, test } from '@vlink/fixtures/test';
import { PAYLOAD_FUNCTION, PayloadSource, type PayloadStore } from './payload-store.js';

/**
 * Payload `i` of store `s`: empty, inlined (≤ 12 bytes), just past inline, a few KiB, and now and then one larger
 * than a pooled block's share (its own block) or than a piece handed to DuckDB; each byte tells row and position.
 */
function payloadOf(s: number, i: number): Uint8Array {
  const length = i % 997 === 5 ? 1_500_000 + i : [0, 1, 12, 13, 4000 + (i % 50)][i % 5]!;
  const bytes = new Uint8Array(length);
  for (let k = 0; k < length; k++) bytes[k] = (k * 31 + i * 7 + s) & 0xff;
  return bytes;
}

const COUNT = 5000;

async function withStores(
  run: (query: (sql: string) => Promise<Record<string, unknown>[]>, stores: PayloadStore[]) => Promise<void>,
): Promise<void> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  const source = new PayloadSource();
  try {
    source.register(connection);
    const stores = [source.store(), source.store()];
    await connection.run('CREATE TABLE refs (s UINTEGER, ref UINTEGER, i INTEGER)');
    const appender = await connection.createAppender('refs');
    // Rows of the two stores interleaved, so one chunk of the function's input names both.
    for (let i = 0; i < COUNT; i++) {
      for (const [s, store] of stores.entries()) {
        appender.appendUInteger(store.id);
        appender.appendUInteger(store.add(payloadOf(s, i)));
        appender.appendInteger(i);
        appender.endRow();
      }
    }
    appender.closeSync();
    for (const store of stores) store.seal();
    await run(async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJS(), stores);
  } finally {
    connection.closeSync();
    instance.closeSync();
    source.close();
  }
}

describe('payload store', () => {
  test('each row reads back its payload, in order, filtered, reordered and across stores', async () => {
    await withStores(async (query, stores) => {
      const check = (rows: Record<string, unknown>[], expected: number) => {
        assert.equal(rows.length, expected);
        for (const row of rows) {
          const s = stores.findIndex((store) => store.id === row.s);
          const i = row.i as number;
          const payload = row.payload as Uint8Array;
          const want = payloadOf(s, i);
          assert.equal(payload.byteLength, want.byteLength, `store ${s} row ${i} length`);
          assert.ok(Buffer.from(payload).equals(want), `store ${s} row ${i} bytes`);
          assert.equal(Number(row.size), want.byteLength);
        }
      };
      const payload = `${PAYLOAD_FUNCTION}(s, ref)`;
      check(await query(`SELECT s, i, ${payload} AS payload, octet_length(${payload}) AS size FROM refs`), 2 * COUNT);
      const one = stores[1]!.id;
      check(
        await query(`SELECT s, i, ${payload} AS payload, octet_length(payload) AS size FROM refs WHERE s = ${one}`),
        COUNT,
      );
      check(
        await query(
          `SELECT s, i, ${payload} AS payload, octet_length(payload) AS size FROM refs WHERE i % 3 <> 1 ORDER BY i DESC`,
        ),
        2 * (COUNT - Math.floor((COUNT + 1) / 3)),
      );
      // equal payloads are equal BLOBs (an inlined string's padding is zeroed, its prefix right)
      const equal = await query(
        `SELECT count(*) AS n FROM refs a JOIN refs b ON a.i = b.i AND a.s <> b.s WHERE ${PAYLOAD_FUNCTION}(a.s, a.ref) = ${PAYLOAD_FUNCTION}(b.s, b.ref)`,
      );
      // payloads of the two stores differ but for the empty ones
      let empty = 0;
      for (let i = 0; i < COUNT; i++) if (payloadOf(0, i).byteLength === 0) empty++;
      assert.equal(Number(equal[0]!.n), 2 * empty);
    });
  });

  test('closed, the source holds nothing: its stores are gone and a query reading them fails', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      const source = new PayloadSource();
      source.register(connection);
      const store = source.store();
      for (let i = 0; i < 2000; i++) store.add(payloadOf(0, i));
      store.seal();
      source.close();
      assert.equal(store.rows, 0);
      await assert.rejects(
        connection.run(`SELECT ${PAYLOAD_FUNCTION}(${store.id}::UINTEGER, 0::UINTEGER)`),
        /staged payloads .* are gone/,
      );
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  });

  test('a store released is gone: a query reading it fails', async () => {
    await withStores(async (query, stores) => {
      stores[0]!.release();
      await assert.rejects(query(`SELECT ${PAYLOAD_FUNCTION}(s, ref) FROM refs`), /staged payloads .* are gone/);
      const rows = await query(`SELECT count(${PAYLOAD_FUNCTION}(s, ref)) AS n FROM refs WHERE s = ${stores[1]!.id}`);
      assert.equal(Number(rows[0]!.n), COUNT);
    });
  });
});
