import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { EXPORT_MESSAGES_DIR } from '../layout.js';

/** Folder of the export's bookkeeping (done markers, journals); `_`-prefixed, so Spark and pyarrow skip it. */
export const EXPORT_STATE_DIR = '_export';

/**
 * The short stable hash that names a bag's part files (`part-<hash>-<n>.parquet`) and its markers: of the bag's
 * location (bag-list.ts `BagRef.key`), not of its id, since two different bags may share an id (the same relative path
 * in two catalogs) and must never share part names or a done marker.
 */
export function bagHash(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
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

/** Bytes a file or folder name may have on the usual file systems (ext4, APFS, NTFS in UTF-16 units, S3 tools). */
export const MAX_NAME_BYTES = 255;

/** The `~<16 hex digits>` that ends a shortened partition name. */
const HASH_SUFFIX_CHARS = 17;

/**
 * The url's partition folder name, `url=<encoded>`, at most {@link MAX_NAME_BYTES} bytes: a longer one (a url of ~85
 * or more characters with many `/`, each `%2F`) would make every write fail with ENAMETOOLONG. Such a name keeps the
 * longest prefix of the encoded url that fits (never cutting a `%XX` or a character) followed by `~` and the first 16
 * hex digits of the url's SHA-256, so two urls sharing the prefix get two folders. The rows keep the whole url in
 * their `url` column; engines that take `url` from the folder name (hive partitioning) see the shortened one.
 */
export function partitionName(url: string): string {
  const name = `url=${encodeUrlPartition(url)}`;
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const budget = MAX_NAME_BYTES - HASH_SUFFIX_CHARS;
  let out = 'url=';
  let bytes = out.length;
  for (const c of url) {
    const piece = encodeUrlPartition(c);
    const size = Buffer.byteLength(piece);
    if (bytes + size > budget) break;
    out += piece;
    bytes += size;
  }
  return `${out}~${createHash('sha256').update(url).digest('hex').slice(0, 16)}`;
}

/** The folder of one url and date: `<out>/messages/<partitionName(url)>/date=<YYYY-MM-DD>`. */
export function partitionDir(outDir: string, url: string, date: string): string {
  return join(outDir, EXPORT_MESSAGES_DIR, partitionName(url), `date=${date}`);
}

/** The final name of a bag's n-th part file. */
export function partName(hash: string, n: number): string {
  return `part-${hash}-${n}.parquet`;
}
