import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import {
  BAG_COLUMNS,
  CATALOG_BAGS_FILE,
  CATALOG_URLS_FILE,
  EXPORT_MESSAGES_DIR,
  type LakeColumn,
  MESSAGE_COLUMNS,
  URL_COLUMNS,
} from '../layout.js';

/**
 * A generated fleet for query tests and the benchmark, written in the layout of layout.ts by DuckDB itself (the real
 * index and export writers are written at the same time by others): `bags` bags, each with an `/imu/data` url and a
 * `/lidar` url whose messages follow the formulas below, so tests compute what queries must answer on their own.
 *
 *   bag i: id `fleet/v<i % 5>/run-<i>.vcap`, starts at 2026-12-01T00:00:00Z + i hours
 *   /imu/data: imuCount(i) messages every 10 ms, data {ax: k / 2, ay: -k}
 *   /lidar:    lidarCount(i) messages every 100 ms; in bags with i % 3 = 0 the messages after index i % 5 come
 *              250 ms later (one 350 ms gap), data {points: 1000 + k, frame: 'laser'}
 */
export const fleet = {
  start: Date.UTC(2026, 11, 1),
  bagId: (i: number) => `fleet/v${i % 5}/run-${i}.vcap`,
  imuCount: (i: number, scale = 1) => (50 + (i % 11)) * scale,
  lidarCount: (i: number, scale = 1) => (20 + (i % 7)) * scale,
  /** µs after the bag's start of lidar message k. */
  lidarOffsetUs: (i: number, k: number) => k * 100_000 + (i % 3 === 0 && k > i % 5 ? 250_000 : 0),
  bagStartUs: (i: number) => (Date.UTC(2026, 11, 1) + i * 3_600_000) * 1000,
} as const;

const cast = (columns: readonly LakeColumn[], exprs: Record<string, string>) =>
  columns
    .map((column) => {
      const expr = exprs[column.name];
      if (expr === undefined) throw new Error(`no expression for ${column.name}`);
      return `CAST(${expr} AS ${column.type}) AS ${column.name}`;
    })
    .join(',\n  ');

/** Writes `<dir>/catalog` and `<dir>/export` for `bags` bags (`scale` multiplies each url's message count). */
export async function writeFleet(dir: string, bags = 100, scale = 1): Promise<{ catalog: string; export: string }> {
  const catalog = join(dir, 'catalog');
  const exported = join(dir, 'export');
  mkdirSync(catalog, { recursive: true });
  mkdirSync(join(exported, EXPORT_MESSAGES_DIR), { recursive: true });
  const instance = await DuckDBInstance.create(':memory:');
  const db = await instance.connect();
  try {
    const start = "TIMESTAMP '2026-12-01 00:00:00' + to_hours(i::BIGINT)";
    await db.run(`CREATE TABLE m AS
      SELECT i, 'fleet/v' || (i % 5) || '/run-' || i || '.vcap' AS bag_id, '/imu/data' AS url, k,
        ${start} + to_microseconds(k * 10000) AS log_time,
        16 + k % 4 AS size, {'ax': k / 2, 'ay': -k::DOUBLE} AS imu, NULL::STRUCT(points INTEGER, frame VARCHAR) AS lidar
      FROM range(${bags}) b(i), range(${60 * scale}) r(k) WHERE k < (50 + i % 11) * ${scale}
      UNION ALL
      SELECT i, 'fleet/v' || (i % 5) || '/run-' || i || '.vcap', '/lidar', k,
        ${start} + to_microseconds(k * 100000 + CASE WHEN i % 3 = 0 AND k > i % 5 THEN 250000 ELSE 0 END),
        1000 + k, NULL, {'points': (1000 + k)::INTEGER, 'frame': 'laser'}
      FROM range(${bags}) b(i), range(${30 * scale}) r(k) WHERE k < (20 + i % 7) * ${scale}`);
    const message = cast(MESSAGE_COLUMNS, {
      bag_id: 'bag_id',
      url: 'url',
      date: "strftime(log_time, '%Y-%m-%d')",
      action: "'pub'",
      ser: "CASE WHEN url = '/imu/data' THEN 'protobuf' ELSE 'cdr' END",
      seq: 'row_number() OVER (PARTITION BY bag_id ORDER BY log_time, url) - 1',
      log_time: 'log_time',
      publish_time: 'log_time - INTERVAL 1 MILLISECOND',
      size: 'size',
      payload: "repeat('\\xAB', size)::BLOB",
    });
    // one struct per url, as the export writes it: each url's files have their own `data` shape
    for (const [url, data] of [
      ['/imu/data', 'imu'],
      ['/lidar', 'lidar'],
    ] as const) {
      await db.run(`COPY (SELECT ${message}, ${data} AS data FROM m WHERE url = '${url}' ORDER BY bag_id, log_time)
        TO '${join(exported, EXPORT_MESSAGES_DIR)}' (FORMAT parquet, PARTITION_BY (url, date), APPEND)`);
    }
    await db.run(`CREATE TABLE u AS SELECT bag_id, url, count(*) AS n, sum(size) AS bytes, min(log_time) AS t0,
        max(log_time) AS t1, max(gap) AS max_gap, median(gap) AS median_gap, list(gap) AS gaps
      FROM (SELECT *, epoch_us(log_time) - epoch_us(lag(log_time) OVER (PARTITION BY bag_id, url ORDER BY log_time)) AS gap FROM m)
      GROUP BY bag_id, url`);
    const urls = cast(URL_COLUMNS, {
      bag_id: 'bag_id',
      url: 'url',
      type: "CASE WHEN url = '/imu/data' THEN 'sensors.Imu' ELSE 'sensor_msgs/msg/LaserScan' END",
      ser: "CASE WHEN url = '/imu/data' THEN 'protobuf' ELSE 'cdr' END",
      action: "'pub'",
      message_count: 'n',
      bytes: 'bytes',
      start_time: 't0',
      end_time: 't1',
      rate_hz: 'CASE WHEN n < 2 THEN NULL ELSE (n - 1) / ((epoch_us(t1) - epoch_us(t0)) / 1e6) END',
      dropped: '0',
      max_gap_us: 'max_gap',
      gap_count: 'len(list_filter(gaps, g -> g > 3 * median_gap))',
    });
    await db.run(
      `COPY (SELECT ${urls} FROM u ORDER BY bag_id, url) TO '${join(catalog, CATALOG_URLS_FILE)}' (FORMAT parquet)`,
    );
    const bagsSql = cast(BAG_COLUMNS, {
      bag_id: 'bag_id',
      location: "'/fleet/' || bag_id",
      format: "'vcap'",
      size_bytes: 'sum(bytes) + 4096',
      modified: 'max(t1)',
      etag: 'NULL',
      start_time: 'min(t0)',
      end_time: 'max(t1)',
      duration_us: 'epoch_us(max(t1)) - epoch_us(min(t0))',
      message_count: 'sum(n)',
      url_count: 'count(*)',
      dropped: '0',
      header_json: `'{"app":"fleet-test"}'`,
      tags_json: `'{"vehicle":"' || split_part(bag_id, '/', 2) || '"}'`,
      indexed_at: "TIMESTAMP '2026-12-10 00:00:00'",
    });
    await db.run(
      `COPY (SELECT ${bagsSql} FROM u GROUP BY bag_id ORDER BY bag_id) TO '${join(catalog, CATALOG_BAGS_FILE)}' (FORMAT parquet)`,
    );
  } finally {
    db.closeSync();
    instance.closeSync();
  }
  return { catalog, export: exported };
}
