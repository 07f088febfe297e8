import { existsSync, statSync } from 'node:fs';
import {
  ActionType,
  BagError,
  FORMAT_VERSION,
  parseAction,
  parseSchemaType,
  resolveSchemaType,
  SchemaType,
  type BackendReader,
  type CursorQuery,
  type Frame,
  type Info,
  type ReaderOptions,
  type SchemaData,
  type UrlKind,
  type UrlMeta,
} from '@vlink/bag-core';
import type { SqlRow, SqliteConnection, SqliteDriver, SqliteStatement, SqlValue } from '../driver/driver.js';
import { decompressFrame, isCompressionFrame } from './compression.js';
import { checkVdb, fixVdb, reindexVdb } from './maintenance.js';
import * as SQL from './sql.js';
import { sqliteError } from './sqlite-errors.js';

/** What the reader keeps per url id to fill frames (spec §7.2: ser and family come from the url maps). */
interface UrlEntry {
  url: string;
  ser: string;
  schemaType: SchemaType;
}

const NONE_LIKE = new Set(['', 'None', 'NONE', 'none']);
const URL_KINDS = new Set<string>(['Method', 'Event', 'Field', 'Unknown']);

/** The facts of a `.vdb` the reader derives at open (spec §2.10). */
export interface VdbFacts {
  info: Info;
  /** Header `compress` is not None-like: rows are checked for the compression frame (§3.2). */
  compressed: boolean;
  /** `idx_elapsed` or `idx_elapsed_url` exists. */
  hasElapsedIndex: boolean;
  /** `idx_elapsed_url` exists. */
  hasUrlIndex: boolean;
  /** A negative `start_timestamp` was found; `check()` fails at once (§2.12). */
  broken: boolean;
  byId: Map<number, UrlEntry>;
  /** `byId` as an array when the ids are small non-negative integers (always, for files we write): faster per row. */
  byIndex: (UrlEntry | undefined)[] | undefined;
  idsByUrl: Map<string, number[]>;
}

/**
 * Reads one `.vdb` file (spec §2.10, §2.11, §7.5). Opens read-only unless `readOnly: false`, which the mutating
 * maintenance verbs (`reindex`, `fix`) need.
 */
export class VdbReader implements BackendReader {
  readonly path: string;
  readonly readOnly: boolean;
  private readonly db: SqliteConnection;
  private facts: VdbFacts;
  private closed = false;
  /** Cursors not yet finished: closing the reader ends them first (a driver cannot close a busy connection). */
  private readonly cursors = new Set<FrameIterator>();

  private constructor(db: SqliteConnection, path: string, readOnly: boolean, facts: VdbFacts) {
    this.db = db;
    this.path = path;
    this.readOnly = readOnly;
    this.facts = facts;
  }

  static open(driver: SqliteDriver, path: string, options: ReaderOptions = {}): VdbReader {
    if (!existsSync(path)) throw new BagError('NOT_FOUND', 'no such .vdb file', { file: path });
    const readOnly = options.readOnly !== false;
    let db: SqliteConnection;
    try {
      db = driver.open(path, { readOnly });
    } catch (error) {
      throw sqliteError(error, 'IO_ERROR', 'cannot open .vdb file', path);
    }
    try {
      db.exec(SQL.BUSY_TIMEOUT_READER);
      return new VdbReader(db, path, readOnly, readFacts(db, path));
    } catch (error) {
      db.close();
      throw sqliteError(error, 'CORRUPT_FILE', 'cannot read .vdb file', path);
    }
  }

  info(): Info {
    this.assertOpen();
    return this.facts.info;
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
    const sql =
      SQL.SELECT_FRAMES +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      (this.facts.hasElapsedIndex ? ' ORDER BY elapsed, rowid;' : ' ORDER BY rowid;');
    let statement: SqliteStatement;
    let rows: IterableIterator<SqlRow>;
    try {
      statement = this.db.prepare(sql);
      rows = statement.iterate(...params);
    } catch (error) {
      throw sqliteError(error, 'IO_ERROR', 'cannot query VLinkDatas', this.path);
    }
    const cursor = new FrameIterator(rows, statement, this.facts, this.path, this.cursors);
    this.cursors.add(cursor);
    return cursor;
  }

  async check(): Promise<boolean> {
    this.assertOpen();
    return checkVdb(this.db, this.facts, this.schemas());
  }

  async reindex(): Promise<boolean> {
    this.assertWritable('reindex');
    const ok = reindexVdb(this.db, this.path);
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
    this.db.close();
  }

  private refresh(): void {
    this.facts = readFacts(this.db, this.path);
  }

  private assertOpen(): void {
    if (this.closed) throw new BagError('CLOSED', 'reader is closed', { file: this.path });
  }

  private assertWritable(verb: string): void {
    this.assertOpen();
    if (this.readOnly) {
      throw new BagError('NOT_SUPPORTED', `${verb} changes the file: open the reader with readOnly: false`, { file: this.path });
    }
  }
}

/** A hand-written iterator (not a generator) to keep the per-row cost at one driver step and one object. */
class FrameIterator implements IterableIterator<Frame> {
  private lastActionText: unknown = undefined;
  private lastAction = ActionType.Unknown;
  private done = false;
  private readonly result: IteratorYieldResult<Frame> = { done: false, value: undefined as unknown as Frame };

  constructor(
    private readonly rows: IterableIterator<SqlRow>,
    private readonly statement: SqliteStatement,
    private readonly facts: VdbFacts,
    private readonly path: string,
    private readonly owners: Set<FrameIterator>,
  ) {}

  [Symbol.iterator](): IterableIterator<Frame> {
    return this;
  }

  next(): IteratorResult<Frame> {
    if (this.done) return { done: true, value: undefined };
    const byId = this.facts.byId;
    const byIndex = this.facts.byIndex;
    for (;;) {
      let step: IteratorResult<SqlRow>;
      try {
        step = this.rows.next();
      } catch (error) {
        this.release();
        throw sqliteError(error, 'IO_ERROR', 'cannot read VLinkDatas', this.path);
      }
      if (step.done === true) {
        this.finish();
        return { done: true, value: undefined };
      }
      const row = step.value;
      const id = row['url'] as number;
      const entry = byIndex !== undefined ? byIndex[id] : byId.get(id);
      if (entry === undefined) continue; // a row of an unknown url is skipped, as VLink's readers do
      const actionText = row['action'];
      if (actionText !== this.lastActionText) {
        this.lastActionText = actionText;
        this.lastAction = parseAction(typeof actionText === 'string' ? actionText : undefined);
      }
      let data = row['data'] as Uint8Array | null;
      if (data === null) data = EMPTY;
      else if (data.constructor !== Uint8Array) data = plain(data);
      if (this.facts.compressed && isCompressionFrame(data)) {
        try {
          data = decompressFrame(data);
        } catch (error) {
          this.release();
          throw BagError.wrap(error, 'CORRUPT_DATA', 'cannot decompress a row', { file: this.path, url: entry.url });
        }
      }
      // One result object per cursor: for-of and spread read `value` before the next step, and each frame is new.
      this.result.value = {
        timestamp: row['elapsed'] as number,
        url: entry.url,
        data,
        serType: entry.ser,
        schemaType: entry.schemaType,
        actionType: this.lastAction,
      };
      return this.result;
    }
  }

  return(): IteratorResult<Frame> {
    if (!this.done) {
      try {
        this.rows.return?.();
      } finally {
        this.finish();
      }
    }
    return { done: true, value: undefined };
  }

  /** Ends the cursor after a failure; a second error while cleaning up would only hide the first one. */
  private release(): void {
    try {
      this.return();
    } catch {
      // the caller is about to throw the original failure
    }
  }

  private finish(): void {
    this.done = true;
    this.owners.delete(this);
    this.statement.finalize();
  }
}

const EMPTY = new Uint8Array(0);

/**
 * better-sqlite3 hands out `Buffer`s, whose `slice()` is a view rather than a copy and which compare unequal to a
 * `Uint8Array` of the same bytes in `deepStrictEqual`. Re-parenting the driver's fresh, unshared Buffer onto
 * `Uint8Array.prototype` makes it a plain `Uint8Array` at a third of the cost of allocating a view over it (a
 * per-row cost that is 5–10 % of a raw 64-byte read).
 */
function plain(data: Uint8Array): Uint8Array {
  return Object.setPrototypeOf(data, Uint8Array.prototype) as Uint8Array;
}

/** Header validation, url maps, index detection, blank and total duration (spec §2.10). */
export function readFacts(db: SqliteConnection, path: string): VdbFacts {
  const header = db.prepare(SQL.SELECT_HEADER).get();
  if (header === undefined) throw new BagError('CORRUPT_FILE', 'VLinkHeader has no row', { file: path });
  const major = int(header['major']);
  if (major !== FORMAT_VERSION.major) {
    throw new BagError('VERSION_MISMATCH', `format major version ${major} is not ${FORMAT_VERSION.major}`, { file: path });
  }
  const accuracy = text(header['accuracy']);
  if (accuracy !== 'MicroSecond') {
    throw new BagError('CORRUPT_FILE', `time accuracy "${accuracy}" is not MicroSecond`, { file: path });
  }
  const compress = text(header['compress']);
  let startTimestamp = int(header['start_timestamp']);
  let complete = int(header['complete']) === 1;
  const broken = startTimestamp < 0;
  if (broken) {
    startTimestamp = 0;
    complete = false;
  }

  const hasSchema =
    db.prepare(SQL.HAS_SCHEMA_TABLE).get() !== undefined && int(db.prepare(SQL.HAS_SCHEMA_ROWS).get()?.['e']) === 1;

  const byId = new Map<number, UrlEntry>();
  const idsByUrl = new Map<string, number[]>();
  const metas: UrlMeta[] = [];
  let totalRawSize = 0;
  for (const row of db.prepare(SQL.SELECT_URLS).all()) {
    const index = int(row['id']);
    const url = text(row['url']);
    const ser = text(row['ser']);
    const schemaType = resolveSchemaType(parseSchemaType(text(row['encoding'])), ser);
    const type = text(row['type']);
    const size = int(row['size']);
    totalRawSize += size;
    metas.push({
      index,
      url,
      type: (URL_KINDS.has(type) ? type : 'Unknown') as UrlKind,
      ser,
      schemaType,
      count: int(row['count']),
      size,
      loss: num(row['loss']),
      freq: num(row['freq']),
    });
    byId.set(index, { url, ser, schemaType });
    const ids = idsByUrl.get(url);
    if (ids) ids.push(index);
    else idsByUrl.set(url, [index]);
  }
  // VLink sorts by transport priority first; that is a VLink middleware notion with no meaning here.
  metas.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.index - b.index));

  const indexes = new Set(db.prepare(SQL.SELECT_INDEXES).all().map((r) => text(r['name'])));
  const hasUrlIndex = indexes.has('idx_elapsed_url');
  const hasElapsedIndex = hasUrlIndex || indexes.has('idx_elapsed');

  const first = db.prepare(hasElapsedIndex ? SQL.FIRST_ELAPSED_INDEXED : SQL.FIRST_ELAPSED_NATURAL).get();
  let blankDuration = first === undefined ? 0 : Math.trunc(int(first['elapsed']) / 1000);
  if (blankDuration < 0) blankDuration = 0;
  let totalDuration = Math.trunc(int(header['duration']) / 1000);
  if (hasElapsedIndex && complete) {
    const last = db.prepare(SQL.LAST_ELAPSED_INDEXED).get();
    if (last !== undefined) {
      const ms = Math.trunc(int(last['elapsed']) / 1000);
      if (ms > blankDuration) totalDuration = ms;
    }
  }

  const tag = header['tag'];
  const info: Info = {
    path,
    format: 'vdb',
    version: `${major}.${int(header['minor'])}.${int(header['patch'])}`,
    storageType: 'SQLite3',
    messageCount: int(header['count']),
    totalDuration,
    blankDuration,
    timeAccuracy: accuracy,
    compressionType: compress,
    processName: text(header['process']),
    dateTime: text(header['date']),
    tagName: tag === null || tag === undefined ? 'Empty' : text(tag),
    hasCompleted: complete,
    timezone: int(header['timezone']),
    startTimestamp,
    splitCount: 1,
    splitBySize: 0,
    splitByTime: 0,
    hasSchema,
    totalRawSize,
    fileSize: fileSize(path),
    urls: metas,
  };
  let byIndex: (UrlEntry | undefined)[] | undefined = [];
  for (const [id, entry] of byId) {
    if (!Number.isInteger(id) || id < 0 || id > 1_000_000) {
      byIndex = undefined;
      break;
    }
    byIndex[id] = entry;
  }
  return { info, compressed: !NONE_LIKE.has(compress), hasElapsedIndex, hasUrlIndex, broken, byId, byIndex, idsByUrl };
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function int(value: SqlValue | undefined): number {
  if (typeof value === 'number') return Math.trunc(value);
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Math.trunc(Number(value)) || 0;
  return 0;
}

function num(value: SqlValue | undefined): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'string') return Number(value) || 0;
  return 0;
}

function text(value: SqlValue | undefined): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (value instanceof Uint8Array) return new TextDecoder().decode(value);
  return String(value);
}

function bytes(value: SqlValue | undefined): Uint8Array {
  if (value instanceof Uint8Array) return value.constructor === Uint8Array ? value : plain(value);
  if (typeof value === 'string') return new TextEncoder().encode(value);
  return new Uint8Array(0);
}

function finite(value: number, name: string): number {
  if (!Number.isFinite(value)) throw new BagError('INVALID_ARGUMENT', `${name} must be a finite number`);
  return value;
}
