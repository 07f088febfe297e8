import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ActionType, BagWriter, type Frame, SchemaType } from '@vlink/bag';
import { fixturePath } from '@vlink/fixtures';
import { DuckDBInstance } from '@duckdb/node-api';

/** Recording start of every bag the catalog tests write (ms since the Unix epoch). */
export const START_MS = 1_700_000_000_000;

/** What a test bag holds per url: the frames pushed, so tests check the catalog against numbers they wrote. */
export interface WrittenUrl {
  count: number;
  bytes: number;
  firstUs: number;
  lastUs: number;
  maxGapUs: number;
  gaps: number;
}

/**
 * `/lidar` at 10 Hz with one hole of 600 ms (one gap over 3 × the 100 ms period), `/imu` at 100 Hz without a hole,
 * payload bytes derived from the index; `shift` moves every time so two bags differ.
 */
export function catalogFrames(lidar: number, shift = 0): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < lidar; i++) {
    const t = 5_000 + shift + i * 100_000 + (i >= lidar / 2 ? 500_000 : 0);
    frames.push(frame('/lidar', t, 200 + (i % 7), i));
    for (let k = 0; k < 10 && i < lidar - 1; k++) frames.push(frame('/imu', t + k * 10_000 + 1, 32, i * 10 + k));
  }
  return frames.sort((a, b) => a.timestamp - b.timestamp);
}

function frame(url: string, timestamp: number, size: number, seed: number): Frame {
  return {
    timestamp,
    url,
    data: Uint8Array.from({ length: size }, (_, j) => (seed * 31 + j) & 0xff),
    serType: url === '/lidar' ? 'pb.Scan' : 'text',
    schemaType: url === '/lidar' ? SchemaType.Protobuf : SchemaType.Raw,
    actionType: ActionType.Publish,
  };
}

/** The per-url numbers of `frames`, as the test wrote them. */
export function writtenUrls(frames: readonly Frame[]): Map<string, WrittenUrl> {
  const out = new Map<string, WrittenUrl & { times: number[] }>();
  for (const f of frames) {
    let u = out.get(f.url);
    if (!u) out.set(f.url, (u = { count: 0, bytes: 0, firstUs: 0, lastUs: 0, maxGapUs: 0, gaps: 0, times: [] }));
    u.count++;
    u.bytes += f.data.byteLength;
    u.times.push(f.timestamp);
  }
  for (const u of out.values()) {
    u.firstUs = u.times[0]!;
    u.lastUs = u.times[u.times.length - 1]!;
    const intervals = u.times.slice(1).map((t, i) => t - u.times[i]!);
    u.maxGapUs = Math.max(...intervals);
    const sorted = [...intervals].sort((a, b) => a - b);
    const median = sorted[Math.ceil(sorted.length / 2) - 1]!;
    u.gaps = intervals.filter((d) => d > 3 * median).length;
  }
  return out;
}

/** Writes a bag of `frames` (any of the four formats; split recordings by 1 s segments). */
export async function writeCatalogBag(path: string, frames: readonly Frame[], tagName = 'catalog'): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const split = path.endsWith('x');
  const writer = await BagWriter.create(path, {
    syncMode: true,
    startTimestamp: START_MS,
    tagName,
    summary: false,
    ...(split ? { splitByTime: 1000 } : {}),
  });
  for (const f of frames) writer.push(f);
  await writer.close();
}

/** The vendored MCAP written by the Python `mcap` library (a foreign bag in the indexed tree). */
export function copyMcapFixture(to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(fixturePath('foreign', 'mcap', 'protobuf.mcap'), to);
}

/** Rows of a query over Parquet files, read with DuckDB (values as JS: BIGINT → bigint, TIMESTAMP → Date). */
export async function duckRows(sql: string): Promise<Record<string, unknown>[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    return (await connection.runAndReadAll(sql)).getRowObjectsJS() as Record<string, unknown>[];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

export function sqlPath(dir: string, file: string): string {
  return `'${join(dir, file).replace(/'/g, "''")}'`;
}
