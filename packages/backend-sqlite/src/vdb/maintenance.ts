import {
  inferSchemaType,
  isValidSchemaType,
  SchemaType,
  type CheckReport,
  type ProgressCallback,
  type SchemaData,
} from '@vlink/bag-core';
import { decompressFrame, isCompressionFrame, ProblemList } from '@vlink/bag-core/internal';
import { bytes } from './facts.js';
import type { SqliteConnection, SqliteDriver } from '../driver/driver.js';
import type { VdbFacts } from './facts.js';
import { assertRegularVdb } from './regular-file.js';
import { assertNoExecutableSchema } from './schema-guard.js';
import * as SQL from './sql.js';
import { trailingBytesProblem } from './trailing-bytes.js';
import { sqliteError } from './sqlite-errors.js';
import { integerOf, storedType } from './stored-types.js';

/**
 * VLink `check()` for one `.vdb` (format reference §2.12), with what failed where: a file flagged broken at open fails
 * at once; then `PRAGMA integrity_check` must answer only `ok`, and the Info/url/schema invariants must hold
 * (`complete` is deliberately not checked: VLink doesn't). Beyond VLink, unless `quick`: every row is read, every
 * compressed payload decoded, and each url's count and size and the header count are held against the rows.
 */
export function verifyVdb(
  db: SqliteConnection,
  facts: VdbFacts,
  schemas: SchemaData[],
  path: string,
  quick: boolean,
  onProgress?: ProgressCallback,
): CheckReport {
  const problems = new ProblemList(path);
  const info = facts.info;
  if (facts.broken) problems.add('start_timestamp is negative');
  if (facts.trailingBytes > 0) problems.add(trailingBytesProblem(facts.trailingBytes));
  let emptyTypes = 0;
  try {
    const rows = db.prepare(SQL.INTEGRITY_CHECK).all();
    if (rows.length === 0) problems.add('integrity_check answered nothing');
    for (const row of rows) {
      const answer = String(Object.values(row)[0]);
      if (answer !== 'ok') problems.add(`integrity_check: ${answer}`);
    }
    emptyTypes = Number(
      db.prepare("SELECT COUNT(*) AS n FROM VLinkUrls WHERE type IS NULL OR type = '';").get()?.['n'] ?? 0,
    );
  } catch (error) {
    problems.add(`SQLite cannot check the file: ${(error as Error).message}`);
    return problems.report(path, quick, 0);
  }
  if (info.totalDuration < info.blankDuration)
    problems.add(
      `duration ${info.totalDuration} ms is shorter than the first message's offset ${info.blankDuration} ms`,
    );
  if (info.messageCount !== 0 && info.urls.length === 0) problems.add(`${info.messageCount} messages but no url`);
  if (emptyTypes > 0) problems.add(`${emptyTypes} urls without a type`);
  let count = 0;
  let size = 0;
  for (const m of info.urls) {
    const at = { url: m.url };
    if (!m.url) problems.add(`url ${m.index} has no name`);
    if (m.count > 0 && !m.ser) problems.add('no ser type although it has messages', at);
    if (!isValidSchemaType(m.schemaType)) problems.add(`family ${m.schemaType} is not valid`, at);
    if (m.schemaType === SchemaType.Unknown && inferSchemaType(m.ser) !== SchemaType.Unknown)
      problems.add(`family unknown although ser "${m.ser}" names one`, at);
    if (!Number.isFinite(m.loss) || (m.loss !== -1 && (m.loss < 0 || m.loss > 1)))
      problems.add(`loss ${m.loss} is not −1 or in [0, 1]`, at);
    if (!(m.freq >= 0)) problems.add(`freq ${m.freq} is not ≥ 0`, at);
    count += m.count;
    size += m.size;
  }
  if (count !== info.messageCount) problems.add(`the urls count ${count} messages, the header ${info.messageCount}`);
  if (size !== info.totalRawSize) problems.add(`the url sizes add up to ${size}, not ${info.totalRawSize}`);
  for (const s of schemas) {
    if (!s.name || !s.encoding || s.schemaType === SchemaType.Unknown)
      problems.add(`schema "${s.name}" has no name, encoding or known family`);
  }
  if (quick) return problems.report(path, true, info.messageCount);
  const frames = verifyRows(db, facts, problems, onProgress);
  return problems.report(path, false, frames);
}

/** Reads every row: its url known, its compressed payload decodable; then the counts and sizes against the rows. */
function verifyRows(
  db: SqliteConnection,
  facts: VdbFacts,
  problems: ProblemList,
  onProgress: ProgressCallback | undefined,
): number {
  const counted = new Map<number, { n: number; size: number }>();
  let frames = 0;
  const progress = onProgress && rowProgress(db, onProgress);
  try {
    for (const row of db.prepare('SELECT rowid, elapsed, url, data FROM VLinkDatas ORDER BY rowid;').iterate()) {
      frames++;
      if (progress && frames % PROGRESS_ROWS === 0) progress.at(frames);
      const id = Number(row['url']);
      const entry = facts.byId.get(id);
      const timeUs = integerOf(row['elapsed']);
      const where = {
        row: Number(row['rowid']),
        ...(timeUs === undefined ? {} : { timeUs }),
        ...(entry ? { url: entry.url } : {}),
      };
      if (!entry) problems.add(`url id ${id} is not in VLinkUrls`, where);
      // What the reader refuses as CORRUPT_DATA (`frame-cursor.ts`), so a check never passes a file that cannot be read.
      if (timeUs === undefined) problems.add(`elapsed is ${storedType(row['elapsed'])}, not an INTEGER`, where);
      if (row['data'] !== null && !(row['data'] instanceof Uint8Array))
        problems.add(`data is ${storedType(row['data'])}, not a BLOB`, where);
      let data = row['data'] as Uint8Array | null;
      if (data !== null && !(data instanceof Uint8Array)) data = bytes(data);
      let size = data?.length ?? 0;
      if (data && facts.compressed && isCompressionFrame(data)) {
        try {
          size = decompressFrame(data).length;
        } catch (error) {
          problems.add(`the compressed payload does not decode: ${(error as Error).message}`, where);
        }
      }
      const c = counted.get(id);
      if (c) {
        c.n++;
        c.size += size;
      } else counted.set(id, { n: 1, size });
    }
  } catch (error) {
    problems.add(`VLinkDatas cannot be read to the end (after ${frames} rows): ${(error as Error).message}`);
    return frames;
  } finally {
    progress?.end();
  }
  for (const meta of facts.info.urls) {
    const c = counted.get(meta.index) ?? { n: 0, size: 0 };
    if (c.n !== meta.count) problems.add(`VLinkUrls says ${meta.count} messages, the rows ${c.n}`, { url: meta.url });
    else if (c.size !== meta.size)
      problems.add(`VLinkUrls says ${meta.size} bytes, the rows ${c.size}`, { url: meta.url });
  }
  return frames;
}

/** Rows between two progress reports: often enough for a bar, rare enough to cost nothing. */
const PROGRESS_ROWS = 1024;

/** Reports rows read of the table's row count; `done` never passes `total` and ends equal to it. */
function rowProgress(db: SqliteConnection, onProgress: ProgressCallback) {
  let total = 0;
  try {
    total = Number(db.prepare('SELECT COUNT(*) AS n FROM VLinkDatas;').get()?.['n'] ?? 0);
  } catch {
    // the read below reports the damage; the bar just ends at once
  }
  return {
    at: (done: number) => onProgress({ done: Math.min(done, total), total, unit: 'rows' }),
    end: () => onProgress({ done: total, total, unit: 'rows' }),
  };
}

/** VLink `check()`'s answer: true when `verifyVdb` finds nothing. */
export function checkVdb(db: SqliteConnection, facts: VdbFacts, schemas: SchemaData[], quick = false): boolean {
  return verifyVdb(db, facts, schemas, facts.info.path, quick).ok;
}

/**
 * VLink `reindex()`: drop every known index and create `idx_elapsed_url` (format reference §2.12). SQLite reports no
 * progress inside one `CREATE INDEX`, so `onProgress` counts the statements (`steps`): the bar moves per index.
 */
export function reindexVdb(db: SqliteConnection, path: string, onProgress?: ProgressCallback): boolean {
  try {
    const total = SQL.REINDEX.length;
    onProgress?.({ done: 0, total, unit: 'steps' });
    for (const [index, sql] of SQL.REINDEX.entries()) {
      db.exec(sql);
      onProgress?.({ done: index + 1, total, unit: 'steps' });
    }
    return true;
  } catch (error) {
    throw sqliteError(error, 'IO_ERROR', 'reindex failed', path);
  }
}

/**
 * VLink `fix(rebuild)` for a single `.vdb` opened read-write (format reference §2.12): recompute url counts/freq and the header
 * count/duration/complete from the rows in one transaction, apply the writer pragmas, optionally `VACUUM` and
 * reindex, then `PRAGMA optimize`. Beyond VLink, each url's `size` is recomputed from the rows too (a crashed file's
 * sizes are those of its last metadata refresh, which the full check holds against the rows); `loss` is kept.
 */
export function fixVdb(db: SqliteConnection, path: string, rebuild: boolean): boolean {
  try {
    for (const sql of SQL.FIX_METADATA) db.exec(sql);
    const compress = String(db.prepare('SELECT compress FROM VLinkHeader LIMIT 1;').get()?.['compress'] ?? '');
    db.exec(SQL.fixSizes(!['', 'None', 'NONE', 'none'].includes(compress)));
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
