import {
  BagError,
  parseSchemaType,
  problemsRecord,
  type BackendReader,
  type CursorQuery,
  type Frame,
  type CheckOptions,
  type CheckReport,
  type Info,
  type ReaderOptions,
  type ReindexOptions,
  type SchemaData,
} from '@vlink/bag-core';
import type { SqlRow, SqliteConnection, SqliteDriver, SqliteStatement, SqlValue } from '../driver/driver.js';
import { bytes, readFacts, text, type VdbFacts } from './facts.js';
import { FrameCursor } from './frame-cursor.js';
import { fixVdb, reindexVdb, verifyVdb } from './maintenance.js';
import * as SQL from './sql.js';
import { hotJournalError, needsRecovery, recoverInterrupted } from './recover.js';
import { assertRegularVdb } from './regular-file.js';
import { assertVdbSchema } from './schema-guard.js';
import { sqliteError } from './sqlite-errors.js';

export { readFacts, type VdbFacts } from './facts.js';

/** A damaged `.vdb` read from its salvaged copy: the file it stands for, and what the read went around. */
export interface ReadAround {
  /** The damaged file's path, which the reader names. */
  name: string;
  fileSize: number;
  /** Listed by `info()` under `vdb.problems`. */
  problems: string[];
  /** Deletes the copy (at close). */
  cleanup: () => void;
}

/**
 * Reads one `.vdb` file (format reference §2.10, §2.11, §7.5). Opens read-only unless `readOnly: false`, which the mutating
 * maintenance verbs (`reindex`, `fix`) need.
 */
export class VdbReader implements BackendReader {
  readonly path: string;
  readonly readOnly: boolean;
  private readonly db: SqliteConnection;
  private facts: VdbFacts;
  private closed = false;
  /** Cursors not yet finished: closing the reader ends them first (a driver cannot close a busy connection). */
  private readonly cursors = new Set<FrameCursor>();

  /** With `tryToFix`, the damage that ended a cursor early (SQLite could read no further); undefined otherwise. */
  damage: BagError | undefined;

  private constructor(
    db: SqliteConnection,
    path: string,
    readOnly: boolean,
    facts: VdbFacts,
    private readonly tryToFix = false,
    /** A damaged file read from its salvaged copy (see read-around.ts): what the reader says of the file it stands for. */
    private readonly readAround?: ReadAround,
  ) {
    this.db = db;
    this.path = readAround?.name ?? path;
    this.readOnly = readOnly;
    this.facts = facts;
  }

  /** Opens the salvaged copy at `copy` of a damaged file, to read in its place (see read-around.ts). */
  static openCopy(driver: SqliteDriver, copy: string, readAround: ReadAround): VdbReader {
    const { db, facts } = VdbReader.connect(driver, copy, true, false);
    return new VdbReader(db, copy, true, facts, true, readAround);
  }

  static open(driver: SqliteDriver, path: string, options: ReaderOptions = {}): VdbReader {
    assertRegularVdb(path);
    const readOnly = options.readOnly !== false;
    const tryToFix = options.tryToFix === true;
    // A crashed writer's unfinished transaction: only a read-write open can roll it back (see recover.ts).
    if (tryToFix && needsRecovery(path)) recoverInterrupted(driver, path);
    const { db, facts } = VdbReader.connect(driver, path, readOnly, tryToFix);
    return new VdbReader(db, path, readOnly, facts, tryToFix);
  }

  private static connect(
    driver: SqliteDriver,
    path: string,
    readOnly: boolean,
    tryToFix: boolean,
  ): { db: SqliteConnection; facts: VdbFacts } {
    let db: SqliteConnection;
    try {
      db = driver.open(path, { readOnly });
    } catch (error) {
      throw sqliteError(error, 'IO_ERROR', 'cannot open .vdb file', path);
    }
    try {
      db.exec(SQL.BUSY_TIMEOUT_READER);
      assertVdbSchema(db, path);
      return { db, facts: readFacts(db, path, tryToFix) };
    } catch (error) {
      db.close();
      throw hotJournalError(error, path) ?? sqliteError(error, 'CORRUPT_FILE', 'cannot read .vdb file', path);
    }
  }

  info(): Info {
    this.assertOpen();
    const around = this.readAround;
    if (!around) return this.facts.info;
    // The file it stands for: its name and size, not complete, and what the read went around (`vdb.problems`).
    const metadata = problemsRecord('vdb', around.problems);
    return { ...this.facts.info, path: around.name, fileSize: around.fileSize, hasCompleted: false, metadata };
  }

  /**
   * With `tryToFix`: reads every row once, and says why the read could not reach the end (SQLite stopped at a damaged
   * page, a row no writer wrote, a payload that does not decode, or fewer rows than a closed file's header counts: a
   * damaged index); undefined when it read whole.
   */
  readThrough(): string | undefined {
    const cursor = this.openCursor({}, true);
    try {
      for (const _ of cursor);
    } catch (error) {
      if (!BagError.isInstance(error) || error.code !== 'CORRUPT_FILE') throw error;
      return error.detail;
    }
    const damage = this.damage;
    this.damage = undefined;
    return damage?.detail;
  }

  /** The facts derived at open (index presence, url maps); for the split layer and maintenance. */
  get vdbFacts(): VdbFacts {
    return this.facts;
  }

  /** Schema rows; the family comes from the encoding label (§2.5). */
  schemas(): SchemaData[] {
    this.assertOpen();
    if (!this.facts.info.hasSchema) return [];
    try {
      return this.db
        .prepare(SQL.SELECT_SCHEMAS)
        .all()
        .map((row) => ({
          name: text(row['ser']),
          encoding: text(row['encoding']),
          schemaType: parseSchemaType(text(row['encoding'])),
          data: bytes(row['data']),
        }));
    } catch (error) {
      throw sqliteError(error, 'CORRUPT_FILE', 'cannot read VLinkSchemas', this.path);
    }
  }

  /**
   * The §7.5 cursor: `url IN (ids)`, inclusive time bounds, `ORDER BY elapsed, rowid` when an elapsed index exists
   * else `ORDER BY rowid`. Payloads are decompressed; frames are fresh objects, `data` is the driver's own buffer.
   */
  frames(query: CursorQuery = {}): IterableIterator<Frame> {
    return this.openCursor(query, !this.tryToFix);
  }

  /** The frames of `query`; `expectWhole`: a whole read of a closed file must step over every row its header counts. */
  private openCursor(query: CursorQuery, expectWhole: boolean): FrameCursor {
    this.assertOpen();
    const where: string[] = [];
    const params: SqlValue[] = [];
    if (query.urls !== undefined) {
      const ids: number[] = [];
      for (const url of query.urls) ids.push(...(this.facts.idsByUrl.get(url) ?? []));
      where.push(`url IN (${ids.length > 0 ? ids.join(', ') : 'NULL'})`);
    }
    if (query.beginUs !== undefined) {
      where.push('elapsed >= ?');
      params.push(finite(query.beginUs, 'beginUs'));
    }
    if (query.endUs !== undefined) {
      where.push('elapsed <= ?');
      params.push(finite(query.endUs, 'endUs'));
    }
    const withPublish = this.facts.hasPublishTimes;
    const sql =
      (withPublish ? SQL.SELECT_FRAMES_WITH_PUBLISH : SQL.SELECT_FRAMES) +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      (this.facts.hasElapsedIndex ? ' ORDER BY elapsed, VLinkDatas.rowid;' : ' ORDER BY VLinkDatas.rowid;');
    let statement: SqliteStatement;
    let rows: IterableIterator<SqlRow>;
    try {
      statement = this.db.prepare(sql);
      rows = statement.iterate(...params);
    } catch (error) {
      throw sqliteError(error, 'IO_ERROR', 'cannot query VLinkDatas', this.path);
    }
    // A whole read of a closed file steps over every row its header counts (net of evictions, exact at close).
    const whole = query.urls === undefined && query.beginUs === undefined && query.endUs === undefined;
    const { hasCompleted, messageCount } = this.facts.info;
    const cursor = new FrameCursor(
      rows,
      statement,
      this.facts,
      this.path,
      this.cursors,
      this.tryToFix ? (error) => (this.damage ??= error) : undefined,
      whole && hasCompleted && expectWhole ? messageCount : undefined,
    );
    this.cursors.add(cursor);
    return cursor;
  }

  async check(): Promise<boolean> {
    return (await this.verify({})).ok;
  }

  /** `check()` with its findings; unless `quick`, every row is read and every compressed payload decoded. */
  async verify(options: CheckOptions): Promise<CheckReport> {
    this.assertOpen();
    let schemas: SchemaData[] = [];
    try {
      schemas = this.schemas();
    } catch {
      // integrity_check reports the damage
    }
    return verifyVdb(this.db, this.facts, schemas, this.path, options.quick === true, options.onProgress);
  }

  async reindex(options: ReindexOptions = {}): Promise<boolean> {
    this.assertWritable('reindex');
    const ok = reindexVdb(this.db, this.path, options.onProgress);
    this.refresh();
    return ok;
  }

  async fix(rebuild: boolean): Promise<boolean> {
    this.assertWritable('fix');
    const ok = fixVdb(this.db, this.path, rebuild);
    this.refresh();
    return ok;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const cursor of this.cursors) cursor.return();
    try {
      this.db.close();
    } finally {
      this.readAround?.cleanup();
    }
  }

  private refresh(): void {
    this.facts = readFacts(this.db, this.path, this.tryToFix);
  }

  private assertOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }

  private assertWritable(verb: string): void {
    this.assertOpen();
    if (this.readOnly) {
      throw new BagError('NOT_SUPPORTED', `${verb} changes the file: open the reader with readOnly: false`, {
        file: this.path,
      });
    }
  }
}

function finite(value: number, name: string): number {
  if (!Number.isFinite(value)) throw new BagError('INVALID_ARGUMENT', `${name} must be a finite number`);
  return value;
}
