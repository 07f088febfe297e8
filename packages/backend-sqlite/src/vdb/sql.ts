/**
 * Every SQL text of the `.vdb` format (format reference §2.1, §2.2, §2.10, §2.12), quoted exactly where VLink's text is known.
 * Kept in one file so a reviewer can diff it against the format reference (§2.2).
 */

/** Writer pragmas, in VLink's order (§2.1 step 3); `journal_mode` depends on `walMode`. */
export function writerPragmas(walMode: boolean): string[] {
  return [
    'PRAGMA temp_store = MEMORY;',
    'PRAGMA page_size = 16384;',
    'PRAGMA cache_size = 8192;',
    'PRAGMA synchronous = OFF;',
    walMode ? 'PRAGMA journal_mode = WAL;' : 'PRAGMA journal_mode = OFF;',
    'PRAGMA automatic_index = OFF;',
    'PRAGMA locking_mode = EXCLUSIVE;',
  ];
}

/** VLink sets the busy timeout through the C API (100 ms, later 500 ms); the pragma is our equivalent. */
export const BUSY_TIMEOUT_WRITER = 'PRAGMA busy_timeout = 500;';
export const BUSY_TIMEOUT_READER = 'PRAGMA busy_timeout = 100;';

export const CREATE_HEADER =
  'CREATE TABLE IF NOT EXISTS VLinkHeader(major INTEGER, minor INTEGER, patch INTEGER, count INTEGER, duration INTEGER, accuracy TEXT, compress TEXT, process TEXT, date TEXT, tag TEXT, complete INTEGER, timezone INTEGER, start_timestamp INTEGER);';
export const CREATE_SCHEMAS = 'CREATE TABLE IF NOT EXISTS VLinkSchemas(ser TEXT, encoding TEXT, data BLOB);';
export const CREATE_URLS =
  'CREATE TABLE IF NOT EXISTS VLinkUrls(id INTEGER, url TEXT, type TEXT, ser TEXT, encoding TEXT, count INTEGER, loss REAL, size INTEGER, freq REAL);';
export const CREATE_DATAS =
  'CREATE TABLE IF NOT EXISTS VLinkDatas(elapsed INTEGER, url INTEGER, action TEXT, data BLOB);';
export const CREATE_INDEX = 'CREATE INDEX IF NOT EXISTS idx_elapsed_url ON VLinkDatas(elapsed, url);';

export const INSERT_HEADER =
  'INSERT INTO VLinkHeader (major, minor, patch, count, duration, accuracy, compress, process, date, tag, complete, timezone, start_timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);';
export const INSERT_SCHEMA = 'INSERT INTO VLinkSchemas(ser, encoding, data) VALUES (?, ?, ?);';
export const INSERT_URL =
  'INSERT INTO VLinkUrls (id, url, type, ser, encoding, count, loss, size, freq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);';
export const INSERT_DATA = 'INSERT INTO VLinkDatas (elapsed, url, action, data) VALUES (?, ?, ?, ?);';
export const UPDATE_HEADER_COUNT = 'UPDATE VLinkHeader SET count=?, duration=? WHERE ROWID=1;';
export const UPDATE_URL_COUNT = 'UPDATE VLinkUrls SET count=?, size=?, freq=? WHERE url=?;';
export const UPDATE_URL_SER = 'UPDATE VLinkUrls SET ser=?, encoding=? WHERE url=?;';
export const UPDATE_URL_LOSS = 'UPDATE VLinkUrls SET loss=? WHERE url=?;';
export const UPDATE_HEADER_COMPLETE = 'UPDATE VLinkHeader SET complete=1 WHERE ROWID=1;';

/**
 * Eviction (enable_limit). VLink's text is `SELECT rowid, url, length(data) FROM VLinkDatas ORDER BY rowid LIMIT 1;`
 * and it then reads the frame header of the blob; we fetch those 8 + 4 bytes in the same query instead of the blob.
 */
export const SELECT_OLDEST =
  'SELECT rowid, url, length(data) AS n, elapsed, substr(data, 1, 8) AS head, substr(data, -4, 4) AS tail FROM VLinkDatas ORDER BY rowid LIMIT 1;';
export const DELETE_ROW = 'DELETE FROM VLinkDatas WHERE rowid = ?;';
export const SELECT_NEXT_OF_URL = 'SELECT elapsed FROM VLinkDatas WHERE rowid > ? AND url = ? ORDER BY rowid LIMIT 1;';

/** The DDL in creation order; the index comes last (§2.2). The header row is inserted right after CREATE_HEADER. */
export const DDL = [CREATE_HEADER, CREATE_SCHEMAS, CREATE_URLS, CREATE_DATAS, CREATE_INDEX] as const;

// Reader (§2.10).
export const SELECT_HEADER =
  'SELECT major, minor, patch, count, duration, accuracy, compress, process, date, tag, complete, timezone, start_timestamp FROM VLinkHeader LIMIT 1;';
export const HAS_SCHEMA_TABLE = "SELECT 1 FROM sqlite_master WHERE type='table' AND name='VLinkSchemas' LIMIT 1;";
export const HAS_SCHEMA_ROWS = 'SELECT EXISTS(SELECT 1 FROM VLinkSchemas LIMIT 1) AS e;';
export const SELECT_URLS = 'SELECT id, url, type, ser, encoding, count, loss, size, freq FROM VLinkUrls;';
export const SELECT_SCHEMAS = 'SELECT ser, encoding, data FROM VLinkSchemas;';
export const SELECT_INDEXES = "SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='VLinkDatas';";
export const FIRST_ELAPSED_INDEXED = 'SELECT elapsed FROM VLinkDatas ORDER BY elapsed LIMIT 1;';
/** A row of `VLinkSchemas`, if any (a schema is embedded). */
export const ANY_SCHEMA = 'SELECT 1 AS one FROM VLinkSchemas LIMIT 1;';
export const FIRST_ELAPSED_NATURAL = 'SELECT elapsed FROM VLinkDatas LIMIT 1;';
/** Per url id: rows, first and last elapsed (an unfinished file's counters, read with tryToFix). */
export const COUNT_BY_URL =
  'SELECT url AS uid, COUNT(*) AS n, MIN(elapsed) AS mn, MAX(elapsed) AS mx FROM VLinkDatas GROUP BY url;';
export const LAST_ELAPSED_INDEXED = 'SELECT elapsed FROM VLinkDatas ORDER BY elapsed DESC LIMIT 1;';

/** Cursor (§7.5): `WHERE` parts are added by the reader. */
export const SELECT_FRAMES = 'SELECT elapsed, url, action, data FROM VLinkDatas';

/**
 * The rows as the salvage reads them: a payload stored as TEXT comes back as its stored bytes. One flipped bit turns a
 * BLOB's serial type into TEXT of the same length (found by fuzzing); the bytes are the payload's, and the reader
 * returns them too, so the row is kept (an INTEGER or REAL payload is no payload and is dropped in salvage.ts); with the rowid, which the salvage walk steps by.
 */
export const SALVAGE_FRAMES =
  "SELECT rowid, elapsed, url, action, CASE typeof(data) WHEN 'text' THEN CAST(data AS BLOB) ELSE data END AS data FROM VLinkDatas";

/**
 * vlink-bag extension (format reference §2.13): frames that never reached the file, per url and cause, stored at
 * close. Created only when there is something to store; VLink's readers only query their own tables.
 */
export const CREATE_COUNTERS =
  'CREATE TABLE IF NOT EXISTS VLinkBagCounters(url TEXT, cause TEXT, count INTEGER, PRIMARY KEY (url, cause));';
export const INSERT_COUNTER =
  'INSERT INTO VLinkBagCounters(url, cause, count) VALUES (?, ?, ?) ON CONFLICT(url, cause) DO UPDATE SET count = excluded.count;';
export const SELECT_COUNTERS = 'SELECT url, cause, count FROM VLinkBagCounters;';
export const HAS_COUNTERS_TABLE = "SELECT 1 FROM sqlite_master WHERE type='table' AND name='VLinkBagCounters' LIMIT 1;";

/**
 * vlink-bag extension (format reference §2.14): the publish time of every row whose frame had one different from its
 * log time, keyed by the `VLinkDatas` rowid. Created with the first such frame; VLink's readers never look at it, and a
 * row without an entry has publish time = elapsed. Rows evicted by `enable_limit` lose their entry with them.
 */
export const CREATE_PUBLISH_TIMES =
  'CREATE TABLE IF NOT EXISTS VLinkBagPublishTimes(id INTEGER PRIMARY KEY, publish INTEGER NOT NULL);';
export const INSERT_PUBLISH_TIME = 'INSERT OR REPLACE INTO VLinkBagPublishTimes(id, publish) VALUES (?, ?);';
export const DELETE_PUBLISH_TIME = 'DELETE FROM VLinkBagPublishTimes WHERE id = ?;';
export const HAS_PUBLISH_TABLE =
  "SELECT 1 FROM sqlite_master WHERE type='table' AND name='VLinkBagPublishTimes' LIMIT 1;";
/** The cursor of a file with publish times: the same rows and order, each with its publish time (or NULL). */
export const SELECT_FRAMES_WITH_PUBLISH =
  'SELECT elapsed, url, action, data, VLinkBagPublishTimes.publish AS publish FROM VLinkDatas LEFT JOIN VLinkBagPublishTimes ON VLinkBagPublishTimes.id = VLinkDatas.rowid';

// Maintenance (§2.12).
export const INTEGRITY_CHECK = 'PRAGMA integrity_check;';
export const REINDEX = [
  'DROP INDEX IF EXISTS idx_elapsed;',
  'DROP INDEX IF EXISTS idx_url;',
  'DROP INDEX IF EXISTS idx_elapsed_url;',
  'CREATE INDEX idx_elapsed_url ON VLinkDatas(elapsed, url);',
  'PRAGMA optimize;',
] as const;
export const FIX_METADATA = [
  'BEGIN IMMEDIATE;',
  'CREATE TEMP TABLE _vlink_fix_stats AS SELECT url AS uid, COUNT(*) AS n, MIN(elapsed) AS mn, MAX(elapsed) AS mx FROM VLinkDatas GROUP BY url;',
  'UPDATE VLinkUrls SET count = IFNULL((SELECT n FROM _vlink_fix_stats WHERE uid = VLinkUrls.id), 0), freq = IFNULL((SELECT CASE WHEN mx > mn THEN n / ((mx - mn) / 1000000.0) ELSE 0 END FROM _vlink_fix_stats WHERE uid = VLinkUrls.id), 0);',
  'UPDATE VLinkHeader SET count = IFNULL((SELECT SUM(n) FROM _vlink_fix_stats), 0), duration = IFNULL((SELECT MAX(mx) FROM _vlink_fix_stats), 0), complete = CASE WHEN (SELECT COUNT(*) FROM _vlink_fix_stats) > 0 THEN 1 ELSE complete END;',
  'DROP TABLE IF EXISTS temp._vlink_fix_stats;',
  'COMMIT;',
] as const;
/**
 * Beyond VLink's fix (which leaves `size` alone): each url's `size` recomputed from its rows, as the writer counts it
 * (§2.4): a compression frame (§3.1) counts the original size in its bytes 4–7 (big-endian), anything else its
 * length. `compressed`: the header's `compress` is not None-like (§3.2), so frames are recognised at all.
 */
export function fixSizes(compressed: boolean): string {
  const hexDigit = (i: number) => `(instr('0123456789ABCDEF', substr(hex(substr(data, 5, 4)), ${i + 1}, 1)) - 1)`;
  const original = Array.from({ length: 8 }, (_, i) => `${hexDigit(i)} * ${16 ** (7 - i)}`).join(' + ');
  const size = compressed
    ? `CASE WHEN length(data) >= 13 AND substr(data, 1, 4) = X'1749B26F' AND substr(data, -4, 4) = X'A705ED71' THEN ${original} ELSE length(data) END`
    : 'length(data)';
  return `UPDATE VLinkUrls SET size = IFNULL((SELECT SUM(${size}) FROM VLinkDatas WHERE url = VLinkUrls.id), 0);`;
}

export const FIX_PRAGMAS = [
  'PRAGMA synchronous = OFF;',
  'PRAGMA temp_store = MEMORY;',
  'PRAGMA page_size = 16384;',
  'PRAGMA cache_size = 8192;',
  'PRAGMA journal_mode = OFF;',
  'PRAGMA automatic_index = OFF;',
  'PRAGMA locking_mode = EXCLUSIVE;',
] as const;
export const TAG_ADD_COLUMN = 'ALTER TABLE VLinkHeader ADD COLUMN tag TEXT;';
export const TAG_UPDATE = 'UPDATE VLinkHeader SET tag = ?;';
