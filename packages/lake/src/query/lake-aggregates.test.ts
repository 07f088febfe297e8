import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BAG_COLUMNS, MESSAGE_COLUMNS, URL_COLUMNS } from '../layout.js';
import { fleet, writeFleet } from '../testing/query-fixture.js';
import { isoFromMicros } from './values.js';
import { type Lake, openLake, queryLake } from './lake.js';
import { rowObjects } from './format.js';

// 100 generated bags (testing/query-fixture.ts); every expected figure is computed here from the fixture's formulas.
const BAGS = 100;
const dir = mkdtempSync(join(tmpdir(), 'vlink-lake-query-'));
let lake: Lake;
let folders: { catalog: string; export: string };

before(async () => {
  folders = await writeFleet(dir, BAGS);
  lake = await openLake(folders);
});
after(() => {
  lake?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ids = Array.from({ length: BAGS }, (_, i) => i);

describe('lake views', () => {
  test('bags, urls and messages have the contract’s columns and types (messages plus the merged data struct)', async () => {
    assert.deepEqual(lake.views, ['bags', 'urls', 'messages']);
    for (const [view, columns] of [
      ['bags', BAG_COLUMNS],
      ['urls', URL_COLUMNS],
    ] as const) {
      const r = await lake.query(`DESCRIBE ${view}`);
      assert.deepEqual(
        r.rows.map((row) => [row[0], row[1]]),
        columns.map((c) => [c.name, c.type]),
      );
    }
    const described = await lake.query('SELECT column_name, column_type FROM (DESCRIBE messages)');
    const types = Object.fromEntries(described.rows.map((row) => [row[0], row[1]]));
    for (const column of MESSAGE_COLUMNS) assert.equal(types[column.name], column.type, column.name);
    assert.equal(types.data, 'STRUCT(ax DOUBLE, ay DOUBLE, points INTEGER, frame VARCHAR)');
  });

  test('per-bag message counts across 100 bags, from the export and from the catalog', async () => {
    const expected = ids.map((i) => [fleet.bagId(i), fleet.imuCount(i) + fleet.lidarCount(i)]).sort();
    const fromExport = await lake.query('SELECT bag_id, count(*) FROM messages GROUP BY bag_id ORDER BY bag_id');
    assert.deepEqual(fromExport.rows, expected);
    const fromCatalog = await lake.query('SELECT bag_id, message_count FROM bags ORDER BY bag_id');
    assert.deepEqual(fromCatalog.rows, expected);
    assert.equal(fromExport.columns[1]?.type, 'BIGINT');
  });

  test('mean rate per url, per vehicle (bag id prefix), from the catalog’s url rows', async () => {
    const r = await lake.query(`SELECT split_part(bag_id, '/', 2) AS vehicle, url, avg(rate_hz) AS mean_rate
      FROM urls GROUP BY ALL ORDER BY vehicle, url`);
    const expected: [string, string, number][] = [];
    for (let v = 0; v < 5; v++) {
      const mine = ids.filter((i) => i % 5 === v);
      const imu = mine.map(() => 100);
      const lidar = mine.map((i) => {
        const n = fleet.lidarCount(i);
        return (n - 1) / (fleet.lidarOffsetUs(i, n - 1) / 1e6);
      });
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      expected.push([`v${v}`, '/imu/data', mean(imu)], [`v${v}`, '/lidar', mean(lidar)]);
    }
    assert.equal(r.rows.length, expected.length);
    r.rows.forEach((row, n) => {
      const [vehicle, url, rate] = expected[n] as [string, string, number];
      assert.equal(row[0], vehicle);
      assert.equal(row[1], url);
      assert.ok(Math.abs((row[2] as number) - rate) < 1e-9, `${vehicle} ${url}: ${row[2]} vs ${rate}`);
    });
  });

  test('every lidar gap over 200 ms, from message times, with its bag and time', async () => {
    const r = await lake.query(`SELECT bag_id, log_time, gap_us FROM (
        SELECT bag_id, log_time, epoch_us(log_time) - epoch_us(lag(log_time) OVER (PARTITION BY bag_id ORDER BY log_time)) AS gap_us
        FROM messages WHERE url = '/lidar') WHERE gap_us > 200000 ORDER BY bag_id`);
    const expected = ids
      .filter((i) => i % 3 === 0 && fleet.lidarCount(i) > (i % 5) + 1)
      .map((i) => {
        const k = (i % 5) + 1;
        return [fleet.bagId(i), isoFromMicros(BigInt(fleet.bagStartUs(i) + fleet.lidarOffsetUs(i, k))), 350_000];
      })
      .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    assert.deepEqual(r.rows, expected);
    assert.equal(r.columns[1]?.type, 'TIMESTAMP');
    // and the catalog's own figure agrees: the largest lidar gap of those bags is the 350 ms one
    const gaps = await lake.query(
      "SELECT count(*) FROM urls WHERE url = '/lidar' AND max_gap_us > 200000 AND gap_count = 1",
    );
    assert.deepEqual(gaps.rows, [[expected.length]]);
  });

  test('hive partitions: url percent-decoded, date text, one date per hour of start', async () => {
    const r = await lake.query('SELECT url, date, count(DISTINCT bag_id) FROM messages GROUP BY ALL ORDER BY ALL');
    const perDate = new Map<string, number>();
    for (const i of ids) {
      const date = new Date(fleet.bagStartUs(i) / 1000).toISOString().slice(0, 10);
      perDate.set(date, (perDate.get(date) ?? 0) + 1);
    }
    const expected = ['/imu/data', '/lidar'].flatMap((url) => [...perDate].map(([date, n]) => [url, date, n]));
    assert.deepEqual(r.rows, expected);
  });

  test('decoded struct fields, payload bytes (base64) and microsecond timestamps in the answer', async () => {
    const r = await lake.query(`SELECT data.ax, data.points, payload, publish_time, log_time, seq FROM messages
      WHERE bag_id = '${fleet.bagId(7)}' AND url = '/imu/data' ORDER BY log_time LIMIT 1 OFFSET 3`);
    const start = fleet.bagStartUs(7) + 30_000;
    assert.deepEqual(r.rows, [
      [1.5, null, btoa('\xAB'.repeat(19)), isoFromMicros(BigInt(start - 1000)), isoFromMicros(BigInt(start)), 3],
    ]);
    assert.equal(isoFromMicros(1_764_547_200_000_001n), '2025-12-01T00:00:00.000001Z');
    assert.equal(isoFromMicros(-1n), '1969-12-31T23:59:59.999999Z');
    assert.deepEqual(rowObjects({ columns: r.columns, rows: r.rows.slice(0, 1), truncated: false })[0]?.ax, 1.5);
  });

  test('limit keeps the first rows and says more were left out', async () => {
    const all = await lake.query('SELECT bag_id FROM bags ORDER BY bag_id');
    assert.equal(all.rows.length, BAGS);
    assert.equal(all.truncated, false);
    const cut = await lake.query('SELECT bag_id FROM bags ORDER BY bag_id', { limit: 7 });
    assert.deepEqual(cut.rows, all.rows.slice(0, 7));
    assert.equal(cut.truncated, true);
    const exact = await lake.query('SELECT bag_id FROM bags ORDER BY bag_id', { limit: BAGS });
    assert.equal(exact.truncated, false);
    const big = await lake.query('SELECT seq FROM messages', { limit: 5000 });
    assert.equal(big.rows.length, 5000);
    assert.equal(big.truncated, true);
  });

  test('queryLake opens, answers and closes; a catalog alone has no messages view', async () => {
    const r = await queryLake('SELECT count(*) FROM urls', { catalog: folders.catalog });
    assert.deepEqual(r.rows, [[2 * BAGS]]);
    await assert.rejects(queryLake('SELECT count(*) FROM messages', { catalog: folders.catalog }), {
      code: 'QUERY_ERROR',
      message: /no view messages: the lake was opened without an export folder \(--export <dir>\)/,
    });
    await assert.rejects(queryLake('SELECT * FROM bags', { export: folders.export }), {
      code: 'QUERY_ERROR',
      message: /no view bags: the lake was opened without a catalog folder/,
    });
  });
});
