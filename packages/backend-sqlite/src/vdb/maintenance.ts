import { inferSchemaType, isValidSchemaType, SchemaType, type SchemaData } from '@vlink/bag-core';
import type { SqliteConnection, SqliteDriver } from '../driver/driver.js';
import type { VdbFacts } from './facts.js';
import { assertRegularVdb } from './regular-file.js';
import { assertNoExecutableSchema } from './schema-guard.js';
import * as SQL from './sql.js';
import { sqliteError } from './sqlite-errors.js';

/**
 * VLink `check()` for one `.vdb` (format reference §2.12): a file flagged broken at open fails at once; then
 * `PRAGMA integrity_check` must answer only `ok`, and the Info/url/schema invariants must hold.
 * Answers false for a file that fails any of them; `complete` is deliberately not checked (VLink doesn't).
 */
export function checkVdb(db: SqliteConnection, facts: VdbFacts, schemas: SchemaData[]): boolean {
  if (facts.broken) return false;
  let emptyTypes: number;
  try {
    const rows = db.prepare(SQL.INTEGRITY_CHECK).all();
    if (rows.length === 0 || !rows.every((row) => Object.values(row)[0] === 'ok')) return false;
    emptyTypes = Number(
      db.prepare("SELECT COUNT(*) AS n FROM VLinkUrls WHERE type IS NULL OR type = '';").get()?.['n'] ?? 0,
    );
  } catch {
    return false; // a file SQLite cannot even check is not ok; that is the verb's answer, not an error
  }
  const info = facts.info;
  if (info.totalDuration < info.blankDuration) return false;
  if (info.messageCount !== 0 && info.urls.length === 0) return false;
  if (emptyTypes > 0) return false;
  let count = 0;
  let size = 0;
  for (const m of info.urls) {
    if (!m.url || !m.type) return false;
    if (m.count > 0 && !m.ser) return false;
    if (!isValidSchemaType(m.schemaType)) return false;
    if (m.schemaType === SchemaType.Unknown && inferSchemaType(m.ser) !== SchemaType.Unknown) return false;
    if (!Number.isFinite(m.loss) || (m.loss !== -1 && (m.loss < 0 || m.loss > 1))) return false;
    if (!(m.freq >= 0)) return false;
    count += m.count;
    size += m.size;
  }
  if (count !== info.messageCount || size !== info.totalRawSize) return false;
  for (const s of schemas) {
    if (!s.name || !s.encoding || s.schemaType === SchemaType.Unknown) return false;
  }
  return true;
}

/** VLink `reindex()`: drop every known index and create `idx_elapsed_url` (format reference §2.12). */
export function reindexVdb(db: SqliteConnection, path: string): boolean {
  try {
    for (const sql of SQL.REINDEX) db.exec(sql);
    return true;
  } catch (error) {
    throw sqliteError(error, 'IO_ERROR', 'reindex failed', path);
  }
}

/**
 * VLink `fix(rebuild)` for a single `.vdb` opened read-write (format reference §2.12): recompute url counts/freq and the header
 * count/duration/complete from the rows in one transaction, apply the writer pragmas, optionally `VACUUM` and
 * reindex, then `PRAGMA optimize`. `size` and `loss` are not touched, as in VLink.
 */
export function fixVdb(db: SqliteConnection, path: string, rebuild: boolean): boolean {
  try {
    for (const sql of SQL.FIX_METADATA) db.exec(sql);
  } catch (error) {
    try {
      db.exec('ROLLBACK;');
    } catch {
      // nothing left to roll back; report the original failure
    }
    throw sqliteError(error, 'IO_ERROR', 'fix: metadata repair failed', path);
  }
  try {
    for (const sql of SQL.FIX_PRAGMAS) db.exec(sql);
    if (rebuild) {
      db.exec('VACUUM;');
      for (const sql of SQL.REINDEX) db.exec(sql);
    }
    db.exec('PRAGMA optimize;');
    return true;
  } catch (error) {
    throw sqliteError(error, 'IO_ERROR', rebuild ? 'fix: rebuild failed' : 'fix failed', path);
  }
}

/** VLink `tag(name)` for one `.vdb`: add the column if an old file lacks it (failure ignored), then set it. */
export function tagVdb(driver: SqliteDriver, path: string, name: string): boolean {
  assertRegularVdb(path);
  let db: SqliteConnection;
  try {
    db = driver.open(path);
  } catch (error) {
    throw sqliteError(error, 'IO_ERROR', 'cannot open .vdb file for tagging', path);
  }
  try {
    db.exec(SQL.BUSY_TIMEOUT_WRITER);
    // The UPDATE below would run a planted trigger.
    assertNoExecutableSchema(db, path);
    try {
      db.exec(SQL.TAG_ADD_COLUMN);
    } catch {
      // "duplicate column name: tag" on every current file; VLink ignores this failure too
    }
    const update = db.prepare(SQL.TAG_UPDATE);
    update.run(name);
    update.finalize();
    return true;
  } catch (error) {
    throw sqliteError(error, 'IO_ERROR', 'cannot tag .vdb file', path);
  } finally {
    db.close();
  }
}
