import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag';
import { createApp, type BagApp, type QueryableLake, serve, type RunningServer } from './index.js';
import { buildFixtureRoot, type FixtureRoot } from './testing/fixtures.js';
import { type Fleet, lakeFleet } from '@vlink/fixtures/lake';

const TOKEN = 'lake-token';
const BAGS = 20;
const dir = mkdtempSync(join(tmpdir(), 'vlink-api-query-'));
let fx: FixtureRoot;
let gen: Fleet;
let folders: { catalog: string; export: string };
let server: RunningServer;
/** A lake whose answers may hold 2000 bytes, with all the time in the world: its refusals never depend on the load. */
let small: BagApp;
/** A lake with a short timeout, for the query that runs past it (1 s: the count asked afterwards must fit into it). */
let hasty: BagApp;

before(async () => {
  fx = await buildFixtureRoot();
  gen = await lakeFleet();
  folders = await gen.writeFleet(dir, BAGS);
  server = await serve({ root: fx.root, port: 0, token: TOKEN, lake: { ...folders, maxRows: 50 } });
  small = createApp({ root: fx.root, workers: 0, lake: { ...folders, maxAnswerBytes: 2000, timeoutMs: 60_000 } });
  hasty = createApp({ root: fx.root, workers: 0, lake: { ...folders, timeoutMs: 1000 } });
});
after(async () => {
  await server?.close();
  await small?.close();
  await hasty?.close();
  fx?.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

const post = (body: unknown, token: string | null = TOKEN) =>
  fetch(`${server.url}/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  assert.ok(!body.error.message.includes(dir), `lake path leaked: ${body.error.message}`);
  return body.error;
}

describe('POST /v1/query', () => {
  test('answers per-bag counts across the fleet with names, types and JSON values', async () => {
    const res = await post({
      sql: 'SELECT bag_id, count(*) AS n, min(log_time) AS first FROM messages GROUP BY bag_id ORDER BY bag_id',
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { columns: unknown; rows: unknown[][]; truncated: boolean; elapsedMs: number };
    assert.deepEqual(body.columns, [
      { name: 'bag_id', type: 'VARCHAR' },
      { name: 'n', type: 'BIGINT' },
      { name: 'first', type: 'TIMESTAMP' },
    ]);
    const expected = Array.from({ length: BAGS }, (_, i) => [
      gen.fleet.bagId(i),
      gen.fleet.imuCount(i) + gen.fleet.lidarCount(i),
      `${new Date(Date.UTC(2026, 11, 1) + i * 3_600_000).toISOString().slice(0, -1)}000Z`,
    ]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    assert.deepEqual(body.rows, expected);
    assert.equal(body.truncated, false);
    assert.equal(typeof body.elapsedMs, 'number');
  });

  test('needs the token', async () => {
    assert.equal((await post({ sql: 'SELECT 1' }, null)).status, 401);
    assert.equal((await post({ sql: 'SELECT 1' }, 'wrong')).status, 401);
  });

  test('row limits: default, asked, and above the server cap', async () => {
    const asked = (await (await post({ sql: 'SELECT seq FROM messages', limit: 7 })).json()) as {
      rows: unknown[];
      truncated: boolean;
    };
    assert.equal(asked.rows.length, 7);
    assert.equal(asked.truncated, true);
    const over = await post({ sql: 'SELECT 1', limit: 51 });
    assert.equal(over.status, 400);
    assert.deepEqual(await errorOf(over), {
      code: 'INVALID_ARGUMENT',
      message: "limit 51 is above this server's 50 rows",
    });
    const bad = await post({ sql: 'SELECT 1', limit: -1 });
    assert.equal(bad.status, 400);
    assert.equal((await errorOf(bad)).code, 'INVALID_ARGUMENT');
    assert.equal((await post('{not json')).status, 400);
  });

  test('bad SQL and refused statements are 400 QUERY_ERROR with DuckDB’s message, no lake path', async () => {
    const syntax = await post({ sql: 'SELEC 1' });
    assert.equal(syntax.status, 400);
    const e1 = await errorOf(syntax);
    assert.equal(e1.code, 'QUERY_ERROR');
    assert.match(e1.message, /Parser Error: syntax error at or near "SELEC"/);
    const outside = await errorOf(await post({ sql: "SELECT * FROM read_csv('/etc/passwd')" }));
    assert.deepEqual([outside.code, /Permission Error/.test(outside.message)], ['QUERY_ERROR', true]);
    const copy = await errorOf(await post({ sql: `COPY (SELECT 1) TO '${folders.export}/messages/x.csv'` }));
    assert.equal(copy.code, 'QUERY_ERROR');
    assert.match(copy.message, /only SELECT \(and EXPLAIN\) run on a lake; this is a COPY statement/);
    // EXPLAIN ANALYZE would run the statement: a forged view for every later client, a file in the catalog
    for (const sql of [
      "EXPLAIN ANALYZE CREATE OR REPLACE VIEW bags AS SELECT 'forged' AS bag_id",
      `EXPLAIN ANALYZE COPY (SELECT 'pwned' AS bag_id) TO '${folders.catalog}/bags.parquet' (FORMAT parquet)`,
    ]) {
      const res = await post({ sql });
      assert.equal(res.status, 400, sql);
      assert.match((await errorOf(res)).message, /EXPLAIN ANALYZE runs the statement it explains/);
    }
    const count = (await (await post({ sql: 'SELECT count(*) AS n FROM bags' })).json()) as { rows: unknown };
    assert.deepEqual(count.rows, [[BAGS]]);
    // an error naming a lake file shows it relative to its folder
    const inside = await errorOf(await post({ sql: `SELECT * FROM read_csv('${folders.catalog}/bags.parquet')` }));
    assert.equal(inside.code, 'QUERY_ERROR');
  });

  test('an answer over the byte limit is 413, a slow query 503 TIMEOUT; the server keeps answering', async () => {
    const request = (sql: string, app = small) =>
      app.request('/v1/query', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sql }),
      });
    const big = await request('SELECT payload FROM messages');
    assert.equal(big.status, 413);
    assert.match((await errorOf(big)).message, /^the answer is over 2000 bytes of JSON \(at row \d+\): ask fewer rows/);
    // rows of 4 MB each: refused at the first one, not made whole and measured after JSON.stringify
    const huge = await request("SELECT repeat('x', 4000000) AS big FROM range(12)");
    assert.equal(huge.status, 413);
    assert.deepEqual(await errorOf(huge), {
      code: 'TOO_LARGE',
      message: 'the answer is over 2000 bytes of JSON (at row 1): ask fewer rows or columns',
    });
    // 4·10^10 products: far past 1 s on any machine (a timeout of 150 ms once failed the 4 MB rows above on a loaded
    // CI machine, hence two apps)
    const slow = await request('SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b', hasty);
    assert.equal(slow.status, 503);
    assert.deepEqual(await errorOf(slow), { code: 'TIMEOUT', message: 'the query ran past its 1000 ms timeout' });
    const ok = await request('SELECT count(*) AS n FROM bags', hasty);
    assert.deepEqual(((await ok.json()) as { rows: unknown }).rows, [[BAGS]]);
  });

  test('the lake is asked for the byte limit; its LIMIT_REACHED is 413, the server’s timeout 503', async () => {
    const asked: unknown[] = [];
    const injected: QueryableLake = {
      async query(sql, options) {
        asked.push({ ...options, signal: options.signal instanceof AbortSignal });
        if (sql === 'big') throw new BagError('LIMIT_REACHED', 'the answer is over 1234 bytes of JSON (at row 2): …');
        // a lake that only stops when the signal says so
        await new Promise((_, reject) => options.signal?.addEventListener('abort', () => reject(new Error('stopped'))));
        return { columns: [], rows: [], truncated: false };
      },
      close() {},
    };
    const app = createApp({
      root: fx.root,
      workers: 0,
      lake: { catalog: folders.catalog, maxAnswerBytes: 1234, timeoutMs: 50, open: async () => injected },
    });
    try {
      const ask = (sql: string) =>
        app.request('/v1/query', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sql, limit: 3 }),
        });
      const big = await ask('big');
      assert.equal(big.status, 413);
      assert.deepEqual(await errorOf(big), {
        code: 'TOO_LARGE',
        message: 'the answer is over 1234 bytes of JSON (at row 2): …',
      });
      assert.deepEqual(asked, [{ limit: 3, signal: true, maxBytes: 1234 }]);
      const slow = await ask('slow');
      assert.equal(slow.status, 503);
      assert.deepEqual(await errorOf(slow), { code: 'TIMEOUT', message: 'the query ran past its 50 ms timeout' });
    } finally {
      await app.close();
    }
  });

  test('too many at once is 503 QUEUE_FULL; an injected lake is used; no lake, no route', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const injected: QueryableLake = {
      async query(sql) {
        await gate;
        return { columns: [{ name: 'sql', type: 'VARCHAR' }], rows: [[sql]], truncated: false };
      },
      close() {},
    };
    const app = createApp({
      root: fx.root,
      workers: 0,
      lake: { catalog: folders.catalog, concurrency: 1, open: async () => injected },
    });
    try {
      const ask = () =>
        app.request('/v1/query', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"sql":"SELECT 1"}',
        });
      const first = ask();
      await new Promise((resolve) => setTimeout(resolve, 20));
      const second = await ask();
      assert.equal(second.status, 503);
      assert.equal((await errorOf(second)).code, 'QUEUE_FULL');
      release();
      assert.deepEqual(((await (await first).json()) as { rows: unknown }).rows, [['SELECT 1']]);
    } finally {
      await app.close();
    }
    const none = createApp({ root: fx.root, workers: 0 });
    try {
      const res = await none.request('/v1/query', { method: 'POST', body: '{"sql":"SELECT 1"}' });
      assert.equal(res.status, 404);
      assert.equal((await errorOf(res)).code, 'ROUTE_NOT_FOUND');
    } finally {
      await none.close();
    }
  });

  test('documented in the OpenAPI document', async () => {
    const res = await fetch(`${server.url}/v1/openapi.json`, { headers: { authorization: `Bearer ${TOKEN}` } });
    const doc = (await res.json()) as { paths: Record<string, { post?: { requestBody?: unknown } }> };
    assert.ok(doc.paths['/v1/query']?.post?.requestBody);
  });
});
