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
 * A url as a hive partition value: every ASCII character but `A–Z a–z 0–9 - _ . ~` percent-encoded (`%2F` for `/`,
 * `%3A` for `:`, `%3D`, `%25`, `%20`, quotes and glob characters too), so a url never makes extra folders, breaks the
 * `key=value` form or needs quoting; other characters (non-ASCII) stay as they are (UTF-8 in the path), because Spark
 * decodes each `%XX` as one character and would turn percent-encoded UTF-8 into mojibake. Spark, pyarrow
 * (`segment_encoding='uri'`) and DuckDB decode it back to the url.
 */
export function encodeUrlPartition(url: string): string {
  let out = '';
  for (const c of url) {
    const code = c.charCodeAt(0);
    out += code > 0x7f || KEPT.test(c) ? c : `%${code.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const KEPT = /^[A-Za-z0-9\-_.~]$/;

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
