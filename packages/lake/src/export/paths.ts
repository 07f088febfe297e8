import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { EXPORT_MESSAGES_DIR } from '../layout.js';

/** Folder of the export's bookkeeping (done markers, journals); `_`-prefixed, so Spark and pyarrow skip it. */
export const EXPORT_STATE_DIR = '_export';

/** The short stable hash of a bag id that names its part files (`part-<hash>-<n>.parquet`) and its markers. */
export function bagHash(bagId: string): string {
  return createHash('sha256').update(bagId).digest('hex').slice(0, 16);
}

/**
 * A url as a hive partition value: percent-encoded (`encodeURIComponent`, so `/`, `:`, `=`, `%` and spaces never
 * make extra folders or break the `key=value` form), and `!'()*` too (RFC 3986), so no glob or quote character is
 * left in a path; Spark, pyarrow (`segment_encoding='uri'`) and DuckDB decode it.
 */
export function encodeUrlPartition(url: string): string {
  return encodeURIComponent(url).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** YYYY-MM-DD (UTC) of a µs epoch time. */
export function utcDate(epochUs: number): string {
  return new Date(Math.floor(epochUs / 1000)).toISOString().slice(0, 10);
}

/** The folder of one url and date: `<out>/messages/url=<encoded>/date=<YYYY-MM-DD>`. */
export function partitionDir(outDir: string, url: string, date: string): string {
  return join(outDir, EXPORT_MESSAGES_DIR, `url=${encodeUrlPartition(url)}`, `date=${date}`);
}

/** The final name of a bag's n-th part file. */
export function partName(hash: string, n: number): string {
  return `part-${hash}-${n}.parquet`;
}
