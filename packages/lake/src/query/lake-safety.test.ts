import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { writeFleet } from '../testing/query-fixture.js';
import { type Lake, openLake } from './lake.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-lake-safety-'));
const outside = join(dir, 'outside');
let lake: Lake;
let folders: { catalog: string; export: string };

before(async () => {
  folders = await writeFleet(join(dir, 'lake'), 3);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.csv'), 'a,b\n1,2\n');
  lake = await openLake(folders);
});
after(() => {
  lake?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A connection of the lake's DuckDB without the statement check: what the lock-down holds without it. */
const rawConnection = () =>
  (
    lake as unknown as { instance: { connect(): Promise<import('@duckdb/node-api').DuckDBConnection> } }
  ).instance.connect();

const refused = (sql: string, message: RegExp) =>
  assert.rejects(lake.query(sql), (error: { code?: string; message?: string }) => {
    assert.equal(error.code, 'QUERY_ERROR', `${sql}: ${error.message}`);
    assert.match(error.message ?? '', message, sql);
    return true;
  });

describe('lake safety', () => {
  test('files outside the lake cannot be read, listed or attached', async () => {
    await refused("SELECT * FROM read_csv('/etc/passwd')", /Permission Error: Cannot access file "\/etc\/passwd"/);
    await refused(`SELECT * FROM read_csv('${outside}/secret.csv')`, /Permission Error/);
    await refused("SELECT * FROM read_text('/etc/hostname')", /Permission Error/);
    await refused(`SELECT * FROM read_text('${folders.catalog}/../outside/secret.csv')`, /Permission Error/);
    await refused("SELECT * FROM glob('/etc/*')", /Permission Error/);
    await refused("ATTACH '/tmp/x.duckdb'", /only SELECT \(and EXPLAIN\) run on a lake; this is a ATTACH/);
  });

  test('nothing can be written, installed, loaded or reconfigured', async () => {
    const target = join(outside, 'x.csv');
    await refused(`COPY (SELECT 1) TO '${target}'`, /Permission Error|only SELECT/);
    await refused(
      `COPY (SELECT 1) TO '${folders.export}/messages/x.csv'`,
      /only SELECT \(and EXPLAIN\) run on a lake; this is a COPY/,
    );
    // outside the files the views read, DuckDB refuses even to prepare it
    await refused(`COPY (SELECT 1) TO '${folders.export}/x.csv'`, /Permission Error|only SELECT/);
    assert.equal(existsSync(target), false);
    assert.equal(existsSync(join(folders.export, 'x.csv')), false);
    assert.equal(existsSync(join(folders.export, 'messages', 'x.csv')), false);
    await refused('INSTALL httpfs', /only SELECT \(and EXPLAIN\) run on a lake; this is a LOAD statement/);
    await refused('LOAD httpfs', /only SELECT.*LOAD|Permission Error/);
    await refused('SET enable_external_access = true', /only SELECT.*SET/);
    await refused('CREATE TABLE t AS SELECT 1', /only SELECT.*CREATE/);
    await refused('SELECT 1; SELECT 2', /one SQL statement; this text has 2/);
    // the views are still there and answer
    assert.deepEqual((await lake.query('SELECT count(*) FROM bags')).rows, [[3]]);
  });

  test('EXPLAIN runs nothing: ANALYZE, options and EXPLAIN of anything but a SELECT are refused', async () => {
    const bags = join(folders.catalog, 'bags.parquet');
    const before = readFileSync(bags);
    const evil = join(folders.export, 'messages', 'evil.csv');
    for (const sql of [
      `EXPLAIN ANALYZE COPY (SELECT 'pwned' AS bag_id) TO '${bags}' (FORMAT parquet)`,
      `explain analyse COPY (SELECT 1) TO '${evil}'`,
      "EXPLAIN ANALYZE CREATE OR REPLACE VIEW bags AS SELECT 'forged' AS bag_id, 999 AS message_count",
      `EXPLAIN (ANALYZE) COPY (SELECT 1) TO '${evil}'`,
      `EXPLAIN (ANALYZE true, FORMAT json) COPY (SELECT 1) TO '${evil}'`,
      `EXPLAIN /* x */ ANALYZE COPY (SELECT 1) TO '${evil}'`,
      `/* x */ EXPLAIN ANALYZE COPY (SELECT 1) TO '${evil}'`,
      `EXPLAIN\nANALYZE\tCOPY (SELECT 1) TO '${evil}'`,
      'EXPLAIN ANALYZE SELECT 1',
    ]) {
      await refused(sql, /EXPLAIN ANALYZE runs|EXPLAIN options|write EXPLAIN first/);
    }
    await refused(`EXPLAIN COPY (SELECT 1) TO '${evil}'`, /this explains a COPY statement/);
    await refused('EXPLAIN CREATE OR REPLACE VIEW bags AS SELECT 1', /this explains a CREATE statement/);
    await refused('EXPLAIN SELECT 1; SELECT 2', /one SQL statement; this text has 2/);
    await refused("EXPLAIN SELECT 1; COPY (SELECT 1) TO 'x.csv'", /one SQL statement/);
    assert.deepEqual(readFileSync(bags), before);
    assert.equal(existsSync(evil), false);
    // plain EXPLAIN of a SELECT still answers, and the views are the lake's own
    const plan = await lake.query('  EXPLAIN SELECT count(*) FROM bags');
    assert.deepEqual(
      plan.columns.map((c) => c.name),
      ['explain_key', 'explain_value'],
    );
    assert.deepEqual((await lake.query('SELECT count(*) FROM bags')).rows, [[3]]);
  });

  test('the views cannot be replaced, and the export’s own state cannot be written, even past the check', async () => {
    mkdirSync(join(folders.export, '_export'), { recursive: true });
    const raw = await rawConnection();
    try {
      for (const sql of [
        "CREATE OR REPLACE VIEW bags AS SELECT 'forged' AS bag_id",
        'DROP VIEW urls',
        'CREATE TABLE t AS SELECT 1',
      ]) {
        await assert.rejects(raw.run(sql), /read-only mode/, sql);
      }
      for (const file of [join(folders.export, '_export', 'x.json'), join(folders.catalog, 'evil.csv')]) {
        await assert.rejects(raw.run(`COPY (SELECT 1) TO '${file}'`), /Permission Error/, file);
        assert.equal(existsSync(file), false);
      }
    } finally {
      raw.closeSync();
    }
    assert.deepEqual((await lake.query('SELECT count(*) FROM bags')).rows, [[3]]);
  });

  test('DuckDB itself is locked: a connection past the statement check cannot undo the lock', async () => {
    // what the statement check stops is also refused by DuckDB's own configuration (defence in depth)
    const raw = await rawConnection();
    try {
      for (const [sql, message] of [
        ['SET enable_external_access = true', /configuration has been locked/],
        ['SET lock_configuration = false', /configuration has been locked/],
        ["SET allowed_directories = ['/']", /configuration has been locked|Cannot change/],
        [`COPY (SELECT 1) TO '${join(outside, 'y.csv')}'`, /Permission Error/],
        ["ATTACH '/tmp/x.duckdb'", /Permission Error/],
        ['INSTALL httpfs', /Permission Error/],
        ['LOAD httpfs', /Permission Error|disabled/],
        ["SELECT * FROM read_csv('/etc/passwd')", /Permission Error/],
      ] as const) {
        await assert.rejects(raw.run(sql), message, sql);
      }
      assert.equal(existsSync(join(outside, 'y.csv')), false);
    } finally {
      raw.closeSync();
    }
  });

  test('a statement past its timeout is interrupted (LIMIT_REACHED) and the lake answers the next one', async () => {
    const started = Date.now();
    await assert.rejects(
      lake.query('SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b', { timeoutMs: 200 }),
      { code: 'LIMIT_REACHED', message: 'the query ran past its 200 ms timeout' },
    );
    assert.ok(Date.now() - started < 10_000, 'interrupted well before the query could end');
    // a timeout that fires while the statement is still being parsed or prepared (an interrupt DuckDB would forget)
    for (let i = 0; i < 5; i++) {
      await assert.rejects(
        lake.query('SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b', { timeoutMs: 1 }),
        { code: 'LIMIT_REACHED' },
      );
    }
    assert.ok(Date.now() - started < 20_000, 'every early timeout stopped the query');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(
      lake.query('SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b', { signal: controller.signal }),
      { code: 'ABORTED' },
    );
    assert.deepEqual((await lake.query('SELECT count(*) FROM urls')).rows, [[6]]);
  });

  test('bad SQL and bad options are typed errors with DuckDB’s message', async () => {
    await refused('SELEC 1', /Parser Error: syntax error at or near "SELEC"/);
    await refused('SELECT no_such_column FROM bags', /Binder Error: Referenced column "no_such_column" not found/);
    await refused('SELECT * FROM no_such_table', /Catalog Error: Table with name no_such_table does not exist/);
    await assert.rejects(lake.query('SELECT 1', { limit: -1 }), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(lake.query('SELECT 1', { timeoutMs: 0 }), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(lake.writeParquet('SELECT 1', join(outside, 'z.parquet')), {
      code: 'INVALID_ARGUMENT',
      message: /is not one of the lake's output files/,
    });
  });

  test('missing folders are NOT_FOUND naming the folder; a closed lake is CLOSED', async () => {
    await assert.rejects(openLake({ catalog: join(dir, 'nope') }), {
      code: 'NOT_FOUND',
      message: `the catalog folder does not exist: ${join(dir, 'nope')}`,
    });
    await assert.rejects(openLake({ catalog: outside }), { code: 'NOT_FOUND', message: /has no bags\.parquet/ });
    await assert.rejects(openLake({ export: outside }), {
      code: 'NOT_FOUND',
      message: /has no Parquet files under messages\//,
    });
    const other = await openLake({});
    assert.deepEqual(other.views, []);
    assert.deepEqual((await other.query('SELECT 40 + 2 AS answer')).rows, [[42]]);
    // a lake without folders is locked all the same
    await assert.rejects(other.query("SELECT * FROM read_csv('/etc/passwd')"), {
      code: 'QUERY_ERROR',
      message: /Permission Error/,
    });
    other.close();
    await assert.rejects(other.query('SELECT 1'), { code: 'CLOSED' });
  });
});
