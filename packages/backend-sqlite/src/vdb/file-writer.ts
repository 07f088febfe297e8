import {
  ActionType,
  BagError,
  parseSchemaType,
  SchemaType,
  type BackendWriter,
  type Frame,
  type RecordingContext,
  type ResolvedWriterConfig,
  type SchemaData,
} from '@vlink/bag-core';
import type { SqliteConnection, SqliteDriver, SqliteStatement } from '../driver/driver.js';
import { compressionEnabled, frameOriginalSize, isCompressionFrame } from './compression.js';
import { createVdbFile } from './create-file.js';
import { FileState, type FileSnapshot, type FileUrl } from './file-state.js';
import { frequency, type VdbRecording } from './recording.js';
import * as SQL from './sql.js';
import { sqliteError } from './sqlite-errors.js';
import { RowEviction } from './eviction.js';
import { CounterTable, PublishTimeTable } from './side-tables.js';
import { ACTION_TEXT } from './url-resolution.js';
import { VdbUrlRegistry } from './url-registry.js';

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
  private readonly recording: VdbRecording;
  private readonly compressing: boolean;
  private readonly insertData: SqliteStatement;
  private readonly updateHeaderCount: SqliteStatement;
  private readonly updateUrlCount: SqliteStatement;
  private readonly updateUrlLoss: SqliteStatement;
  private readonly updateComplete: SqliteStatement;
  private readonly urls: VdbUrlRegistry;
  private readonly publishTimes: PublishTimeTable;
  private readonly counters: CounterTable;
  /** Prepared on the first eviction. */
  private eviction: RowEviction | undefined;
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
    this.recording = recording;
    this.compressing = compressionEnabled(config);
    this.insertData = db.prepare(SQL.INSERT_DATA);
    this.urls = new VdbUrlRegistry(db, path, this.state, recording, context, (error, message, url) =>
      this.fail(error, message, url),
    );
    this.updateHeaderCount = db.prepare(SQL.UPDATE_HEADER_COUNT);
    this.updateUrlCount = db.prepare(SQL.UPDATE_URL_COUNT);
    this.updateUrlLoss = db.prepare(SQL.UPDATE_URL_LOSS);
    this.publishTimes = new PublishTimeTable(db);
    this.counters = new CounterTable(db);
    this.updateComplete = db.prepare(SQL.UPDATE_HEADER_COMPLETE);
    this.lastRefresh = now();
    this.lastClock = this.lastRefresh;
  }

  /** Creates the file (`createVdbFile`) and the writer's statements on it. */
  static open(
    driver: SqliteDriver,
    path: string,
    config: ResolvedWriterConfig,
    context: RecordingContext,
    recording: VdbRecording,
    options: VdbFileOptions = {},
  ): VdbFileWriter {
    const db = createVdbFile(driver, path, config, context, options.date);
    try {
      return new VdbFileWriter(db, path, config, context, recording, options.now ?? defaultNow);
    } catch (error) {
      try {
        db.close();
      } catch {
        // the error below is the one worth reporting
      }
      throw BagError.wrap(error, 'IO_ERROR', 'cannot create .vdb file', { file: path });
    }
  }

  /**
   * Stores one frame (format reference §2.7). Throws `SCHEMA_CONFLICT`/`LIMIT_REACHED` for a rejected frame, `IO_ERROR`
   * on failure. `urlId` is the recording's id of the url (`BackendWriter.write`), the same in every `.vdbx` segment.
   */
  write(frame: Frame, urlId: number): void {
    if (this.closed) throw new BagError('CLOSED', 'write after close', { file: this.path });
    const url = frame.url;
    // Core refuses empty urls at push; this class is also driven directly, and an empty url has no `VLinkUrls` row.
    if (!url) throw new BagError('INVALID_ARGUMENT', 'frame url must not be empty', { file: this.path });
    if (!this.inTransaction) this.begin();
    const st = this.state;
    if (st.rows > this.config.maxRowCount || st.bytes > this.config.maxBytesSize) this.limit(url);

    // The action is a bit index and a `VLinkUrls` type below: anything outside the enum is stored as Unknown.
    let action = frame.actionType;
    if (!(action >= 0 && action <= 8)) action = ActionType.Unknown;
    let fu = st.byUrlId.get(urlId, url);
    if (
      fu === undefined ||
      fu.memoSer !== frame.serType ||
      fu.memoType !== frame.schemaType ||
      (fu.memoActions & (1 << action)) === 0
    ) {
      fu = this.urls.resolve(fu, frame, action);
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
      if (publish !== undefined && publish !== ts) this.publishTimes.store(inserted.lastInsertRowid, publish);
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
        if (this.counters.dirty) this.counters.store();
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
    this.urls.insertSchema(schema, family);
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
    if (this.counters.dirty && !this.closed) {
      // New counters while no frame arrives to refresh the metadata: stored and committed now.
      if (!this.inTransaction) this.begin();
      try {
        this.counters.store();
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

  /**
   * Smallest elapsed in this file (its first message, evictions counted; 0 without rows) and whether it embeds a
   * schema, as a reader finds them (format reference §2.10): the split manifest's segment facts.
   */
  readerFacts(): { minTs: number; hasSchema: boolean } {
    const first = this.db.prepare(SQL.FIRST_ELAPSED_INDEXED).get();
    const schema = this.db.prepare(SQL.ANY_SCHEMA).get();
    return { minTs: first === undefined ? 0 : Number(first['elapsed']), hasSchema: schema !== undefined };
  }

  get urlCount(): number {
    return this.state.urls.size;
  }

  /**
   * The recording's counters by cause, stored in the `VLinkBagCounters` table (vlink-bag, format reference §2.13) at
   * the next metadata refresh (once a second while frames arrive, else the next `tick`) and at close.
   */
  setCounters(table: Record<string, Record<string, number>>): void {
    this.counters.set(table);
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
      this.counters.store();
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
    try {
      this.eviction ??= new RowEviction(this.db, this.state, this.recording, this.publishTimes, this.compressing);
      this.eviction.evictUntil(maxRowCount, maxBytesSize);
    } catch (error) {
      throw this.fail(error, 'cannot evict old rows', url);
    }
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
    this.publishTimes.rolledBack();
    this.counters.rolledBack();
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
