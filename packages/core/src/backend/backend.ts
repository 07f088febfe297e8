import type { ReaderOptions, ResolvedWriterConfig } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { Info } from '../model/info.js';
import type { CheckOptions, CheckReport } from '../maintenance/check-report.js';
import type { ByteSource } from './byte-source.js';
import type { ReindexOptions, SalvageOptions, SalvageResult } from '../maintenance/repair-report.js';
import type { SchemaType } from '../model/schema-type.js';

/**
 * The storage seam. A backend knows one family of file extensions and turns frames into bytes on disk and back.
 * Everything format-neutral (timestamps, queues, plugins, pacing, filters by playback url) lives in core; a backend
 * owns only what its format defines (tables, records, per-url bookkeeping, compression, splitting into segments).
 *
 * Writers and readers are synchronous on purpose: SQLite drivers and file writes are synchronous, and the writer
 * engine runs them off the producer's path (a worker thread in async mode, else a same-thread queue).
 */
export interface Backend {
  /** Short name used in messages, e.g. `sqlite`, `mcap`. */
  readonly name: string;
  /** Lower-case extensions with the dot, e.g. `['.vdb', '.vdbx']`. */
  readonly extensions: readonly string[];
  /**
   * A backend that only reads (foreign formats): writers never pick it for an extension, and its `createWriter`
   * throws `NOT_SUPPORTED`. A writing backend registered for the same extension keeps writing it.
   */
  readonly readOnly?: boolean;
  /**
   * Leading bytes that identify this backend's files whatever their name (MCAP's `\x89MCAP0\r\n`): `detectBackend`
   * tries them for a file whose extension no backend claims. Any one of them matching is enough.
   */
  readonly magic?: readonly Uint8Array[];
  /**
   * A file whose presence makes a directory one bag of this backend (rosbag2's `metadata.yaml`): `detectBackend`
   * tries it for directories.
   */
  readonly directoryMarker?: string;
  /**
   * Names of files that make a directory without its `directoryMarker` a bag of this backend still: rosbag2 writes
   * `metadata.yaml` only when a recording closes, so one that crashed is a folder of storage files
   * (`<name>_<n>.db3`). `detectBackend` tries it after every backend's marker; the reader decides how such a
   * directory reads (rosbag2's: with `tryToFix` only).
   */
  readonly directoryFiles?: RegExp;
  /**
   * Its files are also read under a segment number after the extension (Apollo's `cyber_recorder` names the files
   * of a recording `x.record.00000`, `x.record.00001`, …): a name `<base><ext>.<digits>` finds it for reading.
   */
  readonly numberedSegments?: boolean;
  createWriter(path: string, config: ResolvedWriterConfig, context: RecordingContext): Promise<BackendWriter>;
  openReader(path: string, options: ReaderOptions): Promise<BackendReader>;
  /**
   * Lets async writers run this backend in a worker thread: the URL of an ES module (usually the defining module's
   * `import.meta.url`) that exports this backend object (any export name; matched by `name`) and can be imported in a
   * worker without setup by the main thread. Without it, async writers use the same-thread queue instead.
   */
  readonly workerModule?: string;
  /** Rewrites the recording's tag (VLink `tag()`); resolves false where the format does not support it. */
  tag?(path: string, name: string): Promise<boolean>;
  /**
   * Beyond VLink, for `repairBag`: writes a complete, fsynced copy of the single file `source` (not a split manifest)
   * to `target` with everything that can be read from it, and says what was kept and lost. Never touches `source`.
   */
  salvage?(source: string, target: string, options?: SalvageOptions): Promise<SalvageResult>;
  /**
   * Opens a bag whose bytes come from a `ByteSource` (a url of a registered scheme, e.g. `s3://`) rather than a local
   * path; read-only. Absent: the format needs a local file.
   */
  openSource?(source: ByteSource, options: ReaderOptions): Promise<BackendReader>;
}

/** What the writer engine decided for the whole recording and hands to every file it opens. */
export interface RecordingContext {
  /** Recording start, ms since the Unix epoch. */
  readonly startTimestamp: number;
  /** Minutes east of UTC at writer construction. */
  readonly timezone: number;
  /** Basename of the executable. */
  readonly processName: string;
  /** Resolved tag: config → env `VLINK_BAG_TAG` → `"Empty"`. */
  readonly tagName: string;
  /** Library version written to headers (major must stay 2 for VLink compatibility). */
  readonly version: { readonly major: number; readonly minor: number; readonly patch: number };
  /**
   * Finds the schema for a ser name and family: the recording-wide cache filled by `pushSchema`, then the registered
   * schema callback. Backends call it when a url first needs its schema in a file.
   */
  resolveSchema(name: string, schemaType: SchemaType): SchemaData | undefined;
  /** Called by split backends around a segment switch (VLink split callback semantics, format reference §4.3). */
  onSplit?(index: number, file: string, before: boolean): void;
  /**
   * True when the backend runs on the async writer's own thread, not on a caller's: it may then block that thread
   * (`Atomics.wait`, e.g. for a compressor thread of its own) without stalling anyone's event loop, and give each file
   * resources of its own (on a caller's thread, a backend shares such resources among its files: one per thread).
   */
  readonly writerThread?: boolean;
}

export interface BackendWriter {
  /**
   * Stores one frame. `frame.timestamp` is already resolved (µs since recording start, ≥ 0). Throws a `BagError` when
   * this frame is rejected (schema conflict, limit reached); frames stored before stay stored. The frame object and
   * its `data` belong to the caller and are reused once `write` returns (the worker writes from pooled slabs): copy
   * anything that must outlive the call.
   *
   * `urlId` is the recording's id of `frame.url`: a small non-negative integer, the same for every frame of that url
   * for the whole recording (every segment of a split recording) and never shared by two urls. Ids need not be dense
   * (in worker mode they are the interned string ids the frames cross with, which url and ser names share), so a
   * backend may keep its per-url state in an array indexed by it, with holes, and find it with no string lookup per
   * frame; `frame.url` is still there for names and errors.
   */
  write(frame: Frame, urlId: number): void;
  /** Embeds a schema in the current file now (VLink `push_schema`). */
  writeSchema(schema: SchemaData): void;
  /** Loss ratio of a url, written at close (values > 1 are stored as −1, unknown). */
  setUrlLoss(url: string, loss: number): void;
  /** Makes everything written so far durable (a commit, or a flushed chunk), e.g. for a durable push. */
  commit(): void;
  /** Called about once a second by async writers: commits work that has been pending for more than 3 s. */
  tick(): void;
  /** The file currently being written (a segment for split recordings). */
  currentFile(): string;
  /**
   * The recording's frames that did not reach the file, per url and cause (see `UrlCounters`); the latest table
   * replaces the one before and is stored at close (beyond VLink). Optional: a backend without it stores none.
   */
  setCounters?(table: Record<string, Record<string, number>>): void;
  /** Finishes the recording cleanly (the `complete` flag, summaries, manifest). Idempotent. */
  close(): void;
}

/** A cursor's filter. Times are µs since recording start; both bounds inclusive, undefined = open. */
export interface CursorQuery {
  /** Stored urls to keep; undefined = all. An empty array keeps nothing. */
  urls?: readonly string[];
  beginUs?: number;
  endUs?: number;
  /**
   * Which time the bounds apply to: `log` (default, `timestamp`) or `publish` (`publishTime`, or the log time for a
   * frame without one). Backends only ever see `log` queries: core applies `publish` bounds itself (publish times
   * are not indexed), reading the urls' frames in the usual (log) order and keeping those inside the window.
   */
  timeBase?: TimeBase;
}

/** Log time (when the recorder received a message) or publish time (when its source produced it); §1.3. */
export type TimeBase = 'log' | 'publish';

export interface BackendReader {
  readonly path: string;
  info(): Info;
  schemas(): SchemaData[];
  /**
   * Frames in the format's read order (`.vdb`: `ORDER BY elapsed, rowid` when indexed; `.vcap`: file order), with
   * payloads decompressed and `serType`/`schemaType` filled from the url metadata. The yielded frame object and its
   * `data` may be reused by the next step: copy what you keep.
   */
  frames(query: CursorQuery): IterableIterator<Frame>;
  /**
   * The bytes of attachment `index` of `info().attachments` (foreign formats that have attachments, e.g. MCAP).
   * Throws `NOT_FOUND` for an index outside the list.
   */
  attachment?(index: number): Uint8Array;
  /**
   * Split recordings: the segment (0-based, recording order) of the last frame a cursor of this reader handed out.
   * Absent for single files (always segment 0).
   */
  splitIndex?(): number;
  close(): void;
  /** VLink maintenance verbs (format reference §2.12); absent where the format has none. */
  check?(): Promise<boolean>;
  /**
   * The full check with what was found where: every checksum, every payload decoded, the bookkeeping against the data
   * (`quick`: metadata and structure only). `check()` is `verify()`'s `ok` where a backend has both.
   */
  verify?(options: CheckOptions): Promise<CheckReport>;
  /** Rebuilds the format's indexes; `onProgress` (when given) is called as it advances. */
  reindex?(options?: ReindexOptions): Promise<boolean>;
  /** Repairs the file; `options.recordingStart`: it is a segment of a split recording with that start (SalvageOptions). */
  fix?(rebuild: boolean, options?: Pick<SalvageOptions, 'recordingStart'>): Promise<boolean>;
}
