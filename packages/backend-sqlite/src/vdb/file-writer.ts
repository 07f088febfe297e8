import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  ActionType,
  BagError,
  formatVlinkDate,
  parseSchemaType,
  resolveSchemaType,
  SchemaType,
  schemaTypeLabel,
  urlKindOf,
  type BackendWriter,
  type Frame,
  type RecordingContext,
  type ResolvedWriterConfig,
  type SchemaData,
} from '@vlink/bag-core';
import type { SqliteConnection, SqliteDriver, SqliteStatement } from '../driver/driver.js';
import { compressionEnabled, frameOriginalSize, isCompressionFrame } from './compression.js';
import { FileState, type FileSnapshot, type FileUrl } from './file-state.js';
import { frequency, type VdbRecording } from './recording.js';
import * as SQL from './sql.js';
import { sqliteError } from './sqlite-errors.js';
import { ACTION_TEXT, schemaKey, serForActionFast, urlFamily } from './url-resolution.js';

/** Options a split layer passes per segment. */
export interface VdbFileOptions {
  /** Header `date`; default: the recording start (`formatVlinkDate(context.startTimestamp)`). */
  date?: string;
  /** Monotonic ms clock for the 1 s metadata refresh and the 3 s stale-transaction commit; tests inject one. */
  now?: () => number;
}

const METADATA_REFRESH_MS = 1000;
const STALE_TRANSACTION_MS = 3000;
const CLOCK_EVERY_MAX = 256;
const CLOCK_GAP_MIN_MS = 0.5;
const CLOCK_GAP_MAX_MS = 2;

/**
 * Writes one `.vdb` file exactly as VLink's `VDBWriter` does (format reference §2.1–§2.9). Recording-wide state (global url ids,
 * totals, compression counters, losses) lives in the `VdbRecording` it is given, so a split layer can chain files.
 *
 * Not thread-safe and synchronous by design: the writer engine in core serialises calls.
 */
export class VdbFileWriter implements BackendWriter {
  readonly path: string;
  /** Counters, urls and schema keys of this file; a split layer reads `rows`, `bytes`, `lastTs`, `urls.size`. */
  readonly state = new FileState();

  private readonly db: SqliteConnection;
  private readonly config: ResolvedWriterConfig;
  private readonly context: RecordingContext;
  private readonly recording: VdbRecording;
  private readonly compressing: boolean;
  private readonly insertData: SqliteStatement;
  private readonly insertUrl: SqliteStatement;
  private readonly insertSchemaRow: SqliteStatement;
  private readonly updateHeaderCount: SqliteStatement;
  private readonly updateUrlCount: SqliteStatement;
  private readonly updateUrlSer: SqliteStatement;
  private readonly updateUrlLoss: SqliteStatement;
  private readonly updateComplete: SqliteStatement;
  private evictStatements: { oldest: SqliteStatement; remove: SqliteStatement; next: SqliteStatement } | undefined;
  private inTransaction = false;
  private transactionStart = 0;
  private sinceCommit = 0;
  private lastRefresh: number;
  private lastClock: number;
  private clockEvery = 1;
  private clockCountdown = 1;
  private snapshot: FileSnapshot | undefined;
  private closed = false;
  private readonly now: () => number;

  private constructor(
    db: SqliteConnection,
    path: string,
    config: ResolvedWriterConfig,
    context: RecordingContext,
    recording: VdbRecording,
    now: () => number,
  ) {
    this.db = db;
    this.now = now;
    this.path = path;
    this.config = config;
    this.context = context;
    this.recording = recording;
    this.compressing = compressionEnabled(config);
    this.insertData = db.prepare(SQL.INSERT_DATA);
    this.insertUrl = db.prepare(SQL.INSERT_URL);
    this.insertSchemaRow = db.prepare(SQL.INSERT_SCHEMA);
    this.updateHeaderCount = db.prepare(SQL.UPDATE_HEADER_COUNT);
    this.updateUrlCount = db.prepare(SQL.UPDATE_URL_COUNT);
    this.updateUrlSer = db.prepare(SQL.UPDATE_URL_SER);
    this.updateUrlLoss = db.prepare(SQL.UPDATE_URL_LOSS);
    this.updateComplete = db.prepare(SQL.UPDATE_HEADER_COMPLETE);
    this.lastRefresh = now();
    this.lastClock = this.lastRefresh;
  }

  /**
   * Creates the file: deletes an existing one (and its journal/WAL leftovers), creates missing directories, applies
   * the pragmas, and creates tables, header row and statements inside one transaction (format reference §2.1, §2.2).
   */
  static open(
    driver: SqliteDriver,
    path: string,
    config: ResolvedWriterConfig,
    context: RecordingContext,
    recording: VdbRecording,
    options: VdbFileOptions = {},
  ): VdbFileWriter {
    let db: SqliteConnection | undefined;
    try {
      for (const suffix of ['', '-journal', '-wal', '-shm']) {
        if (existsSync(path + suffix)) rmSync(path + suffix, { force: true });
      }
      mkdirSync(dirname(path), { recursive: true });
      db = driver.open(path);
      db.exec(SQL.BUSY_TIMEOUT_WRITER);
      for (const pragma of SQL.writerPragmas(config.walMode)) db.exec(pragma);
      db.exec('BEGIN;');
      db.exec(SQL.CREATE_HEADER);
      const v = context.version;
      const header = db.prepare(SQL.INSERT_HEADER);
      header.run(
        v.major,
        v.minor,
        v.patch,
        0,
        0,
        'MicroSecond',
        compressionEnabled(config) ? 'lzav' : 'None',
        context.processName,
        options.date ?? formatVlinkDate(context.startTimestamp),
        context.tagName,
        0,
        context.timezone,
        context.startTimestamp,
      );
      header.finalize();
      db.exec(SQL.CREATE_SCHEMAS);
      db.exec(SQL.CREATE_URLS);
      db.exec(SQL.CREATE_DATAS);
      db.exec(SQL.CREATE_INDEX);
      const writer = new VdbFileWriter(db, path, config, context, recording, options.now ?? defaultNow);
      db.exec('COMMIT;');
      return writer;
    } catch (error) {
      try {
        db?.close();
      } catch {
        // the open error below is the one worth reporting
      }
      throw BagError.wrap(error, 'IO_ERROR', 'cannot create .vdb file', { file: path });
    }
  }

  /** Stores one frame (format reference §2.7). Throws `SCHEMA_CONFLICT`/`LIMIT_REACHED` for a rejected frame, `IO_ERROR` on failure. */
  write(frame: Frame): void {
    if (this.closed) throw new BagError('CLOSED', 'write after close', { file: this.path });
    const url = frame.url;
    if (!url) throw new BagError('INVALID_ARGUMENT', 'frame url must not be empty', { file: this.path });
    if (!this.inTransaction) this.begin();
    const st = this.state;
    if (st.rows > this.config.maxRowCount || st.bytes > this.config.maxBytesSize) this.limit(url);

    let action = frame.actionType;
    if (!(action >= 0 && action <= 8)) action = ActionType.Unknown;
    let fu = st.urls.get(url);
    if (
      fu === undefined ||
      fu.memoSer !== frame.serType ||
      fu.memoType !== frame.schemaType ||
      (fu.memoActions & (1 << action)) === 0
    ) {
      fu = this.resolve(fu, frame, action);
    }

    const data = frame.data;
    const length = data.length;
    const ts = frame.timestamp;
    let blob = data;
    let accounted = length;
    if (this.compressing) {
      blob = this.recording.decider!.maybeCompress(url, data);
      // A payload the caller already framed counts its original size (format reference §2.4 `size`).
      if (blob === data && isCompressionFrame(data)) accounted = frameOriginalSize(data);
    }
    const publish = frame.publishTime;
    try {
      const inserted = this.insertData.run(ts, fu.id, ACTION_TEXT[action]!, blob);
      if (publish !== undefined && publish !== ts) this.storePublishTime(inserted.lastInsertRowid, publish);
    } catch (error) {
      throw this.fail(error, 'cannot insert a frame', url);
    }

    const rec = fu.rec;
    const recording = this.recording;
    st.rows++;
    st.bytes += accounted;
    fu.count++;
    fu.size += accounted;
    rec.count++;
    rec.size += accounted;
    recording.count++;
    recording.size += accounted;
    this.sinceCommit += length;
    if (ts > recording.maxTimestamp) recording.maxTimestamp = ts;
    if (action >= ActionType.Publish) {
      if (fu.firstTs < 0) fu.firstTs = ts;
      fu.lastTs = ts;
      if (rec.firstTs < 0) rec.firstTs = ts;
      rec.lastTs = ts;
    }
    if (ts > st.lastTs) st.lastTs = ts;

    if (--this.clockCountdown <= 0) this.checkClock(fu);
    if (this.sinceCommit > this.config.cacheSize) this.commit();
  }

  /** The side table of publish times (§2.14), created with the first frame whose publish time differs from its log time. */
  private storePublishTime(rowid: number | bigint, publish: number): void {
    if (this.insertPublish === undefined) {
      this.db.exec(SQL.CREATE_PUBLISH_TIMES);
      this.insertPublish = this.db.prepare(SQL.INSERT_PUBLISH_TIME);
      this.publishTable = true;
    }
    this.insertPublish.run(rowid, Math.floor(publish));
  }
  private insertPublish: SqliteStatement | undefined;
  /** Whether the side table exists: false in a new file, unknown (undefined) after a rollback. */
  private publishTable: boolean | undefined = false;

  /**
   * Step 14 of §2.7 (refresh this url's counters and the header once a second). Reading a clock costs about as
   * much as the rest of our per-frame bookkeeping, so it is read every `clockEvery` frames, a stride that adapts
   * to keep about one read per millisecond: the refresh is at most ~2 ms late at any rate.
   */
  private checkClock(fu: FileUrl): void {
    const now = this.now();
    const gap = now - this.lastClock;
    this.lastClock = now;
    if (gap < CLOCK_GAP_MIN_MS) {
      if (this.clockEvery < CLOCK_EVERY_MAX) this.clockEvery <<= 1;
    } else if (gap > CLOCK_GAP_MAX_MS && this.clockEvery > 1) this.clockEvery >>= 1;
    this.clockCountdown = this.clockEvery;
    if (now - this.lastRefresh > METADATA_REFRESH_MS) {
      this.lastRefresh = now;
      try {
        this.updateUrlCount.run(fu.count, fu.size, frequency(fu.count, fu.firstTs, fu.lastTs), fu.url);
        this.updateHeaderCount.run(this.state.rows, this.state.lastTs);
        if (this.countersDirty) this.storeCounters();
      } catch (error) {
        throw this.fail(error, 'cannot refresh metadata', fu.url);
      }
    }
  }

  /** VLink `push_schema` for this file: inserts the schema unless this file already has it (format reference §2.5). */
  writeSchema(schema: SchemaData): void {
    if (this.closed) throw new BagError('CLOSED', 'writeSchema after close', { file: this.path });
    if (!this.inTransaction) this.begin();
    const family = schema.schemaType !== SchemaType.Unknown ? schema.schemaType : parseSchemaType(schema.encoding);
    this.insertSchema(schema, family);
  }

  setUrlLoss(url: string, loss: number): void {
    this.recording.setLoss(url, loss);
  }

  /** Commits the open transaction, if any. */
  commit(): void {
    if (!this.inTransaction || this.closed) return;
    try {
      this.db.exec('COMMIT;');
    } catch (error) {
      throw this.fail(error, 'commit failed');
    }
    this.inTransaction = false;
    this.sinceCommit = 0;
    this.snapshot = undefined;
  }

  /** The async writer's 1-second timer: commits a transaction that has been open for more than 3 s (format reference §2.8). */
  tick(): void {
    if (this.countersDirty && !this.closed) {
      // New counters while no frame arrives to refresh the metadata: stored and committed now.
      if (!this.inTransaction) this.begin();
      try {
        this.storeCounters();
      } catch (error) {
        throw this.fail(error, 'cannot store the counters');
      }
      this.commit();
      return;
    }
    if (this.inTransaction && this.now() - this.transactionStart > STALE_TRANSACTION_MS) this.commit();
  }

  currentFile(): string {
    return this.path;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Number of urls this file holds (the split check needs ≥ 1). */
  /** Rows in this file, net of evictions (header `count`). */
  get rows(): number {
    return this.state.rows;
  }

  /** Accounted (uncompressed) bytes in this file, net of evictions. */
  get bytes(): number {
    return this.state.bytes;
  }

  /** Largest elapsed written to this file (header `duration`). */
  get lastTs(): number {
    return this.state.lastTs;
  }

  get urlCount(): number {
    return this.state.urls.size;
  }

  /**
   * The recording's counters by cause, stored in the `VLinkBagCounters` table (vlink-bag, format reference §2.13) at
   * the next metadata refresh (once a second while frames arrive, else the next `tick`) and at close.
   */
  setCounters(table: Record<string, Record<string, number>>): void {
    this.counters = table;
    this.countersDirty = true;
  }
  private counters: Record<string, Record<string, number>> | undefined;
  private countersDirty = false;

  /** Creates the table only when there is something to store: a file without drops keeps VLink's tables alone. */
  private storeCounters(): void {
    const rows = Object.entries(this.counters ?? {}).flatMap(([url, causes]) =>
      Object.entries(causes).map(([cause, n]) => [url, cause, n] as const),
    );
    this.countersDirty = false;
    if (rows.length === 0) return;
    this.db.exec(SQL.CREATE_COUNTERS);
    const insert = this.db.prepare(SQL.INSERT_COUNTER);
    for (const [url, cause, n] of rows) insert.run(url, cause, n);
    insert.finalize();
  }

  /** Clean close (`close_segment`, format reference §2.8): final metadata, loss, `complete=1`, optional pragmas. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      if (this.inTransaction) this.db.exec('COMMIT;');
      this.inTransaction = false;
      this.db.exec('BEGIN;');
      for (const fu of this.state.urls.values()) {
        this.updateUrlCount.run(fu.count, fu.size, frequency(fu.count, fu.firstTs, fu.lastTs), fu.url);
      }
      this.updateHeaderCount.run(this.state.rows, this.state.lastTs);
      for (const [url, loss] of this.recording.losses) this.updateUrlLoss.run(loss, url);
      this.storeCounters();
      this.updateComplete.run();
      this.db.exec('COMMIT;');
      if (this.config.walMode) {
        this.db.exec('PRAGMA journal_mode = OFF;');
        // SQLite refuses WAL → OFF and silently stays in WAL (so VLink's files stay WAL too); leaving through DELETE
        // gives the finished file a plain rollback-journal header that read-only readers open without -shm.
        const mode = this.db.prepare('PRAGMA journal_mode;');
        const still = mode.get()?.['journal_mode'] === 'wal';
        mode.finalize();
        if (still) this.db.exec('PRAGMA journal_mode = DELETE;');
      }
      if (this.config.optimizeOnExit) this.db.exec('PRAGMA optimize;');
    } catch (error) {
      throw sqliteError(error, 'IO_ERROR', 'cannot close .vdb file cleanly', this.path);
    } finally {
      this.db.close();
    }
  }

  private begin(): void {
    try {
      this.db.exec('BEGIN;');
    } catch (error) {
      throw sqliteError(error, 'IO_ERROR', 'cannot begin a transaction', this.path);
    }
    this.inTransaction = true;
    this.transactionStart = this.now();
    this.snapshot = this.state.snapshot(this.recording.snapshot());
  }

  /**
   * Step 6–8 of §2.7 for a url whose (ser, family, action) input is new: checks for a conflicting ser or family,
   * registers the url (recording-wide and in this file), updates the stored ser/encoding and embeds the schema.
   */
  private resolve(fu: FileUrl | undefined, frame: Frame, action: ActionType): FileUrl {
    const url = frame.url;
    const rec0 = fu?.rec ?? this.recording.urls.get(url);
    let ser = rec0 ? rec0.ser : '';
    const inSer = frame.serType;
    if (inSer !== '') {
      if (ser === '') ser = inSer;
      else if (ser !== inSer) {
        throw new BagError('SCHEMA_CONFLICT', `ser type "${inSer}" conflicts with the recorded "${ser}"`, {
          file: this.path,
          url,
        });
      }
    }
    let type = rec0 ? rec0.schemaType : SchemaType.Unknown;
    const family = urlFamily(ser, frame.schemaType, action);
    if (family !== SchemaType.Unknown) {
      if (type === SchemaType.Unknown) type = family;
      else if (type !== family) {
        throw new BagError(
          'SCHEMA_CONFLICT',
          `schema type ${schemaTypeLabel(family) || family} conflicts with the recorded ${schemaTypeLabel(type) || type}`,
          { file: this.path, url },
        );
      }
    }

    try {
      let rec = rec0;
      if (rec === undefined) rec = this.recording.addUrl(url, urlKindOf(action), ser, type);
      else {
        rec.ser = ser;
        rec.schemaType = type;
      }
      if (fu === undefined) {
        this.insertUrl.run(rec.index, url, urlKindOf(action), ser, schemaTypeLabel(type), 0, 0, 0, 0);
        fu = {
          rec,
          id: rec.index,
          url,
          count: 0,
          size: 0,
          firstTs: -1,
          lastTs: -1,
          rowSer: ser,
          rowType: type,
          memoSer: inSer,
          memoType: frame.schemaType,
          memoActions: 0,
        };
        this.state.urls.set(url, fu);
        this.state.byId.set(rec.index, fu);
      } else if (fu.rowSer !== ser || fu.rowType !== type) {
        this.updateUrlSer.run(ser, schemaTypeLabel(type), url);
        fu.rowSer = ser;
        fu.rowType = type;
      }
      // The schema of this message: for RPC, the request or response half of `Req|Resp` (format reference §2.6).
      const half = serForActionFast(ser, action);
      if (half !== '') {
        const halfFamily = resolveSchemaType(frame.schemaType, half);
        const key = schemaKey(half, halfFamily);
        if (!this.state.schemaKeys.has(key)) {
          const schema = this.context.resolveSchema(half, halfFamily);
          if (schema) this.insertSchema(schema, halfFamily);
        }
      }
    } catch (error) {
      throw this.fail(error, 'cannot register url', url);
    }
    if (fu.memoSer !== inSer || fu.memoType !== frame.schemaType) {
      fu.memoSer = inSer;
      fu.memoType = frame.schemaType;
      fu.memoActions = 0;
    }
    fu.memoActions |= 1 << action;
    return fu;
  }

  private insertSchema(schema: SchemaData, family: SchemaType): void {
    const ownFamily = schema.schemaType !== SchemaType.Unknown ? schema.schemaType : parseSchemaType(schema.encoding);
    const key = schemaKey(schema.name, ownFamily === SchemaType.Unknown ? family : ownFamily);
    if (this.state.schemaKeys.has(key)) return;
    const encoding = schema.encoding || schemaTypeLabel(ownFamily === SchemaType.Unknown ? family : ownFamily);
    // VLink writes a schema row only when name, encoding and data are all non-empty.
    if (!schema.name || !encoding || schema.data.length === 0) return;
    try {
      this.insertSchemaRow.run(schema.name, encoding, schema.data);
    } catch (error) {
      throw this.fail(error, `cannot insert schema ${schema.name}`);
    }
    this.state.schemaKeys.add(key);
    this.state.schemaKeys.add(schemaKey(schema.name, family));
  }

  /**
   * §2.8 limit rule, run before inserting. Without `enableLimit` the frame is rejected; with it the oldest rows are
   * evicted and every counter they fed is corrected (a framed blob counts its original size).
   */
  private limit(url: string): void {
    const { maxRowCount, maxBytesSize } = this.config;
    if (!this.config.enableLimit) {
      throw new BagError(
        'LIMIT_REACHED',
        `file limit reached (rows ${this.state.rows} > ${maxRowCount} or bytes ${this.state.bytes} > ${maxBytesSize}); frame rejected`,
        { file: this.path, url },
      );
    }
    this.evictStatements ??= {
      oldest: this.db.prepare(SQL.SELECT_OLDEST),
      remove: this.db.prepare(SQL.DELETE_ROW),
      next: this.db.prepare(SQL.SELECT_NEXT_OF_URL),
    };
    const { oldest, remove, next } = this.evictStatements;
    try {
      while (this.state.rows > maxRowCount || this.state.bytes > maxBytesSize) {
        const row = oldest.get();
        if (row === undefined) break;
        const rowid = row['rowid'] as number;
        const id = row['url'] as number;
        remove.run(rowid);
        if ((this.publishTable ??= this.hasPublishTable()))
          (this.deletePublish ??= this.db.prepare(SQL.DELETE_PUBLISH_TIME)).run(rowid);
        const size = this.evictedSize(row['n'] as number | null, row['head'], row['tail']);
        const fu = this.state.byId.get(id);
        this.state.rows--;
        this.state.bytes -= size;
        this.recording.count--;
        this.recording.size -= size;
        if (fu === undefined) continue;
        const rec = fu.rec;
        fu.count--;
        fu.size -= size;
        rec.count--;
        rec.size -= size;
        if (fu.firstTs >= 0) {
          const following = next.get(rowid, id);
          const first = following === undefined ? -1 : (following['elapsed'] as number);
          fu.firstTs = first;
          rec.firstTs = first;
          if (first < 0) fu.lastTs = rec.lastTs = -1;
        }
      }
    } catch (error) {
      throw this.fail(error, 'cannot evict old rows', url);
    }
  }

  private deletePublish: SqliteStatement | undefined;

  private hasPublishTable(): boolean {
    const probe = this.db.prepare(SQL.HAS_PUBLISH_TABLE);
    try {
      return probe.get() !== undefined;
    } finally {
      probe.finalize();
    }
  }

  private evictedSize(length: number | null, head: unknown, tail: unknown): number {
    if (
      this.compressing &&
      (length ?? 0) >= 13 &&
      head instanceof Uint8Array &&
      tail instanceof Uint8Array &&
      head.length === 8 &&
      tail.length === 4
    ) {
      const probe = new Uint8Array(13);
      probe.set(head, 0);
      probe.set(tail, 9);
      if (isCompressionFrame(probe)) return frameOriginalSize(head);
    }
    return length ?? 0;
  }

  /** SQL failure: `ROLLBACK`, restore every counter and map to the state at `BEGIN` (format reference §2.7), return the error. */
  private fail(error: unknown, message: string, url?: string): BagError {
    const wrapped = sqliteError(error, 'IO_ERROR', `${message}; the uncommitted batch was rolled back`, this.path, url);
    if (BagError.isInstance(error)) return error;
    try {
      this.db.exec('ROLLBACK;');
    } catch {
      // SQLite may already have rolled back (e.g. SQLITE_FULL); the state restore below is what matters.
    }
    this.inTransaction = false;
    this.sinceCommit = 0;
    // The side table may have been created inside the rolled back transaction: find out again when next needed (the
    // dropped statements are finalized when the connection closes).
    this.insertPublish = undefined;
    this.deletePublish = undefined;
    this.publishTable = undefined;
    // Counters stored in the rolled back transaction are gone: store them again at the next refresh.
    this.countersDirty = this.counters !== undefined;
    const s = this.snapshot;
    this.snapshot = undefined;
    if (s) {
      this.state.restore(s);
      this.recording.restore(s.recording);
    }
    return wrapped;
  }
}

const defaultNow = (): number => performance.now();
