import type { Backend, BackendWriter, RecordingContext } from '../backend/backend.js';
import { backendFor, extensionOf } from '../backend/registry.js';
import { isRemotePath, stageUrl, type UrlStaging } from '../backend/byte-source.js';
import { BagError } from '../errors.js';
import { resolveWriterConfig, type ResolvedWriterConfig } from '../model/config.js';
import { summarizeBag, summaryPath, writeSummaryFile } from '../analysis/summary.js';
import { companionMetaFrame, type CompanionMeta } from '../model/companion-meta.js';
import { BagReader } from '../reader/bag-reader.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { type BagPluginInterface, PluginDirection, UrlRemapCache } from '../plugins/bag-plugin.js';
import { ElapsedClock } from './elapsed-clock.js';
import type { EngineHost, WriteEngine, WriterMode } from './engine.js';
import { LocalEngine } from './local-engine.js';
import { createRecordingContext } from './recording-context.js';
import { SchemaRegistry, type SchemaCallback } from './schema-registry.js';
import { SharedWriters } from './shared-writers.js';
import { WorkerEngine } from './worker-engine.js';
import { pickRuntime, WriterDropEvent, WriterErrorEvent, type BagWriterOptions } from './writer-options.js';
import { DropCounters } from './drop-counters.js';
import { SourceQueues } from './source-queues.js';
import { WriteWaiters } from './write-waiters.js';
import { emptyDropCounters, type DropReason, type WriterStats } from './writer-stats.js';

export { WriterDropEvent, WriterErrorEvent } from './writer-options.js';
export type { BagWriterOptions } from './writer-options.js';

export type WriterErrorCallback = (error: BagError) => void;

/**
 * Records frames into a bag; the file extension picks the backend (`.vdb`, `.vdbx`, `.vcap`, `.vcapx`).
 *
 * `push()` never waits for the disk. In async mode (the default) the backend runs in a worker: frames are batched,
 * handed over without blocking, and written there; where no worker can run, a bounded same-thread queue drained in
 * slices takes its place. `syncMode: true` writes on the caller's stack, as VLink's sync mode does. Call `close()`
 * (or `quit()` + `waitForQuit()`) to finish the file; `await using writer = await BagWriter.create(...)` does it.
 */
export class BagWriter extends EventTarget {
  readonly path: string;
  readonly config: ResolvedWriterConfig;
  readonly context: RecordingContext;

  private engine!: WriteEngine;
  private readonly schemas: SchemaRegistry;
  private readonly clock = new ElapsedClock();
  private running = false;
  private quitting = false;
  private closed = false;
  private failed = false;
  private lastError: BagError | undefined;
  private lastRejection: BagError | undefined;
  private writtenFrames = 0;
  private writtenBytes = 0;
  private commits = 0;
  private readonly dropped = emptyDropCounters();
  /** Every drop per url and cause, and those counted on this side only (a worker counts and stores its own). */
  private readonly counters = new DropCounters();
  private readonly producerCounters = new DropCounters();
  private lastDropAt = Number.NEGATIVE_INFINITY;
  /** `write()` and `ready()` calls waiting for room in their source's queue. */
  private readonly waiters: WriteWaiters;
  private readonly errorCallbacks: WriterErrorCallback[] = [];
  private readonly splitBefore: Array<(index: number, file: string) => void> = [];
  private readonly splitAfter: Array<(index: number, file: string) => void> = [];
  private plugin: BagPluginInterface | undefined;
  private remap: UrlRemapCache | undefined;
  private readonly renamedUrls = new Map<string, Set<string>>();
  private readonly losses = new Map<string, number>();
  private readonly quitPromise: Promise<void>;
  private resolveQuit!: () => void;
  /** The segment being written (split recordings), from the split notifications. */
  private splitIndex = 0;
  /** Frames handed to the engine, and those it has reported back as written or dropped (for `waitForIdle`). */
  private handedOver = 0;
  private settled = 0;

  private constructor(
    path: string,
    config: ResolvedWriterConfig,
    context: RecordingContext,
    schemas: SchemaRegistry,
    sources: SourceQueues,
  ) {
    super();
    this.waiters = new WriteWaiters(sources);
    this.path = path;
    this.config = config;
    this.context = context;
    this.schemas = schemas;
    this.quitPromise = new Promise((resolve) => (this.resolveQuit = resolve));
  }

  /**
   * Opens a new recording at `path` (an existing file is replaced, as VLink does). Rejects with the backend's error
   * when the file cannot be created, in every mode.
   */
  static async create(path: string, options: BagWriterOptions = {}): Promise<BagWriter> {
    if (typeof path !== 'string' || path.length === 0)
      throw new BagError('INVALID_ARGUMENT', 'bag path must not be empty');
    const { worker, transferPayloads, maxQueueTimeMs, summary, sources: sourceLimits, ...config } = options;
    const sources = new SourceQueues(sourceLimits);
    const backend = backendFor(path, 'write');
    const resolved = resolveWriterConfig(config);
    // A url (`s3://…`): the backend writes a local staging copy, uploaded per closed segment and at close.
    const staging = isRemotePath(path) ? await stageUrl(path) : undefined;
    const local = staging?.localPath ?? path;
    const schemas = new SchemaRegistry();
    let writer: BagWriter | undefined;
    const context = createRecordingContext(resolved, schemas, (index, file, before) =>
      writer?.host.split(index, file, before),
    );
    writer = new BagWriter(path, resolved, context, schemas, sources);
    writer.summary = summary !== false;
    writer.staging = staging;
    writer.localPath = local;
    const runtime = resolved.syncMode ? undefined : pickRuntime(worker, backend);
    if (runtime && backend.workerModule) {
      writer.engine = await WorkerEngine.open(writer.host, {
        path: local,
        config: resolved,
        context,
        schemas,
        runtime,
        transfer: transferPayloads === true,
        maxQueueTimeMs: maxQueueTimeMs ?? 250,
        sources,
        backend: backend as Backend & { workerModule: string },
      });
    } else {
      const backendWriter: BackendWriter = await backend.createWriter(local, resolved, context);
      writer.engine = new LocalEngine(backendWriter, writer.host, local, resolved, sources);
    }
    return writer;
  }

  /**
   * The writer configured by env `VLINK_BAG_PATH` (tag `VLINK_BAG_TAG`), created on the first call and shared by
   * later ones (VLink `global_get`). Resolves null when the variable is unset or names an unsupported extension; a
   * Promise because opening a file is asynchronous here. Closing it lets the next call open a new one.
   */
  static globalGet(): Promise<BagWriter | null> {
    return shared.global();
  }

  /** One shared writer per path, created on first use (VLink `filter_get`); null for an unsupported extension. */
  static filterGet(path: string, options: BagWriterOptions = {}): Promise<BagWriter | null> {
    return shared.filter(path, options);
  }

  /** Closes every writer handed out by `globalGet`/`filterGet` (e.g. at exit). */
  static closeShared(): Promise<void> {
    return shared.closeAll();
  }

  /** Where frames are stored: `'worker'`, `'queue'` (same-thread fallback) or `'sync'`. */
  get mode(): WriterMode {
    return this.engine.mode;
  }

  /**
   * VLink `is_running`: true while the writer records — from `asyncRun()` (or the first push; at once in sync mode)
   * until `quit()`/`close()`.
   */
  isRunning(): boolean {
    return !this.quitting && !this.closed && (this.running || this.config.syncMode);
  }

  /**
   * VLink `wait_for_idle`: resolves once every frame accepted so far has been written or counted as dropped, and
   * `stats()` says so (nothing queued, no `write()` waiting for room), or the writer failed or closed. Polls every few
   * ms: the engines report writes in batches, not an "empty" event, and an idle wait is not a hot path.
   */
  async waitForIdle(): Promise<void> {
    const busy = () => this.waiters.count > 0 || this.engine.queuedFrames() > 0 || this.settled < this.handedOver;
    while (!this.closed && !this.failed && busy()) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** VLink `is_split_mode`: the recording is split into segments (`.vdbx`, `.vcapx`: a manifest plus segment files). */
  isSplitMode(): boolean {
    return extensionOf(this.path).endsWith('x');
  }

  /**
   * VLink `get_split_index`: the index of the segment being written (0 for the first; always 0 when not split). In
   * worker mode it follows the split notifications, so it may trail the worker by a moment.
   */
  getSplitIndex(): number {
    return this.splitIndex;
  }

  /** Starts async recording and restarts the writer clock (format reference §2.9); the first `push` starts it too. */
  asyncRun(): void {
    if (this.running || this.closed || this.config.syncMode) return;
    this.running = true;
    this.clock.restart();
    this.engine.start();
  }

  /**
   * The writer's clock: µs since recording start, the time a frame pushed now with a negative timestamp would get.
   * The clock of the recording helpers (`SnapshotSampler`, `ActionRecorder`: `clock: () => writer.nowUs()`). The clock
   * restarts when recording starts (`asyncRun()` or the first push), so call `asyncRun()` before reading it.
   */
  nowUs(): number {
    return this.clock.nowUs();
  }

  /**
   * Queues a frame. A negative `timestamp` takes the writer's clock (µs since start). Returns the timestamp used, or
   * −1 when the frame was refused (empty url, writer closed or failed, queue full; in `syncMode` also a storage
   * rejection); `stats().dropped` counts why. The payload is copied (or, with `transferPayloads`, taken) before
   * `push` returns in worker mode; the same-thread modes keep a reference until the frame is written.
   */
  push(frame: Frame): number {
    const accepted = this.accept(frame);
    if (accepted === undefined) return -1;
    if (this.plugin) {
      // The timestamp is resolved before the plugin (format reference §2.9); what it emits is stored as emitted.
      this.plugin.onWrite(accepted);
      return accepted.timestamp;
    }
    return this.store(accepted) ? accepted.timestamp : -1;
  }

  /**
   * Records companion metadata for a frame pushed before (format reference §1.3): a JSON frame on `<url>/meta` with
   * the frame's log and publish times and action. Pass the frame with the timestamp `push` returned. Returns like
   * `push`; throws `INVALID_ARGUMENT` for an unresolved timestamp or metadata that is not a JSON object.
   */
  pushMeta(frame: Pick<Frame, 'url' | 'timestamp' | 'publishTime' | 'actionType'>, meta: CompanionMeta): number {
    return this.push(companionMetaFrame(frame, meta));
  }

  /**
   * Counts `n` occurrences of `cause` on `url` in the recording's counters by cause (format reference §2.13): causes
   * only the application knows (`readTimeout`, `missedSlot`, `duplicateSample`, `staleSnapshot`, `submitFailed`, …)
   * beside the writer's own (`queueDepth`, `queueMemory`, `limit`, `schemaConflict`, `storageError`, …). Stored in
   * the file with them: at every metadata refresh (about once a second while recording) and at close. Shown by
   * `stats().droppedByUrl`, `info`, the HTTP API and the player. Throws `INVALID_ARGUMENT` for an empty url or
   * cause or an `n` that is not a positive integer, `CLOSED` once the writer closed (the table is already stored).
   */
  count(url: string, cause: string, n = 1): void {
    if (typeof url !== 'string' || url.length === 0)
      throw new BagError('INVALID_ARGUMENT', 'count: url must be a non-empty string');
    if (typeof cause !== 'string' || cause.length === 0)
      throw new BagError('INVALID_ARGUMENT', 'count: cause must be a non-empty string', { url });
    if (!Number.isSafeInteger(n) || n <= 0)
      throw new BagError('INVALID_ARGUMENT', `count: n must be a positive integer, got ${n}`, { url });
    if (this.closed || this.quitting)
      throw new BagError('CLOSED', 'count after close: the counters are already stored', { file: this.path, url });
    this.counters.add(url, cause, n);
    this.producerCounters.add(url, cause, n);
    this.engine.countersChanged();
  }

  /**
   * Lossless `push` for producers that can wait (beyond VLink): resolves with the timestamp at once while the frame's
   * source queue is below its high-water mark (half its limits, and half the shared limits or of its fair share), and
   * otherwise once it has drained below it, so a full queue never drops a frame. A source's frames keep their order,
   * also when several `write()`s wait; a source that waits does not hold back another's. Rejects (and drops nothing
   * silently) when the frame is refused for a reason waiting cannot fix: an empty url, a closed or failed writer. The
   * payload must stay unchanged until the promise resolves (it is then copied, as `push` copies it).
   */
  write(frame: Frame): Promise<number> {
    const accepted = this.accept(frame);
    if (accepted === undefined)
      return Promise.reject(this.lastRejection ?? new BagError('INVALID_ARGUMENT', 'frame refused'));
    if (!this.waiters.waiting(accepted.url) && this.engine.hasRoom(accepted.data.byteLength, accepted.url))
      return this.storeOrReject(accepted);
    return this.waiters.wait(accepted);
  }

  /** True when `write()` would wait (the queue is above its high-water mark, or writes are waiting already). */
  get writableNeedDrain(): boolean {
    return this.waiters.waiting() || !this.engine.hasRoom(0);
  }

  /**
   * Resolves when the queue is below its high-water mark (at once when it is): for stream-style producers that check
   * before they produce. With `url`: when that url's source queue is (what `write()` of it waits for). A `'drain'`
   * event is dispatched at the same moment.
   */
  ready(url?: string): Promise<void> {
    if (!this.waiters.waiting(url) && this.engine.hasRoom(0, url)) return Promise.resolve();
    return this.waiters.whenReady(url);
  }

  /** Like `push`, but resolves once the frame is committed to disk; rejects with the reason it was not. */
  pushDurable(frame: Frame): Promise<number> {
    const accepted = this.accept(frame);
    if (accepted === undefined)
      return Promise.reject(this.lastRejection ?? new BagError('INVALID_ARGUMENT', 'frame refused'));
    if (this.plugin) {
      return Promise.reject(
        new BagError('NOT_SUPPORTED', 'pushDurable cannot be combined with a write plugin (it may hold frames)'),
      );
    }
    return new Promise((resolve, reject) => {
      if (!this.store(accepted, { resolve, reject })) reject(this.lastRejection);
    });
  }

  /** Binds a write plugin (`onWrite` before storage, `convertUrlMeta` renames or drops urls); undefined unbinds. */
  bindPluginInterface(plugin: BagPluginInterface | undefined): void {
    this.plugin?.detach();
    this.plugin = plugin;
    this.remap = plugin ? new UrlRemapCache(plugin) : undefined;
    if (!plugin) return;
    plugin.attach(PluginDirection.Write, (emitted) => {
      this.store(emitted);
    });
    plugin.onReset();
  }

  /** Embeds a schema (protobuf descriptor set, flatbuffers bfbs, …) for `name`; false on a conflict. */
  pushSchema(schema: SchemaData): boolean {
    try {
      const stored = this.schemas.add(schema);
      if (!this.closed && !this.quitting) this.engine.writeSchema(stored);
      return true;
    } catch (error) {
      this.report(BagError.wrap(error, 'SCHEMA_CONFLICT', 'pushSchema failed'));
      return false;
    }
  }

  /** Answers schemas the recording does not know yet; runs on this thread, also in worker mode. */
  registerSchemaCallback(callback: SchemaCallback | undefined): void {
    this.schemas.setCallback(callback);
    if (this.engine instanceof WorkerEngine) this.engine.schemasChanged();
  }

  /** Loss ratio of a url in [0, 1] (> 1 is stored as −1, unknown), written when the file closes. */
  setUrlLoss(url: string, loss: number): void {
    if (!this.quitting) this.engine.setUrlLoss(url, loss);
    this.losses.set(url, loss);
  }

  /** Error callback for storage errors and rejected frames; errors are never swallowed silently. */
  registerErrorCallback(callback: WriterErrorCallback): void {
    this.errorCallbacks.push(callback);
  }

  /** Split callback `(index, file, before)` for split recordings; see format reference §4.3. In worker mode it is a notification. */
  registerSplitCallback(callback: (index: number, file: string) => void, before = false): void {
    (before ? this.splitBefore : this.splitAfter).push(callback);
  }

  /** True once a storage error happened (frames after it are dropped); `stats().lastError` says which. */
  fail(): boolean {
    return this.failed;
  }

  stats(): WriterStats {
    return {
      mode: this.engine.mode,
      queuedFrames: this.engine.queuedFrames(),
      queuedBytes: this.engine.queuedBytes(),
      writtenFrames: this.writtenFrames,
      writtenBytes: this.writtenBytes,
      dropped: { ...this.dropped },
      droppedByUrl: this.counters.table(),
      commits: this.commits,
      currentFile: this.closed ? '' : this.engine.currentFile(),
      lastError: this.lastError,
    };
  }

  /** Stops accepting frames, writes what is queued, then closes the file (header `complete`). */
  quit(): void {
    if (this.quitting) return;
    // Let a buffering plugin hand over what it holds before the queue stops taking frames.
    this.plugin?.flush();
    // VLink writes a loss at close for the url and for every name a write plugin renamed it to.
    for (const [url, loss] of this.losses) {
      for (const renamed of this.renamedUrls.get(url) ?? []) this.engine.setUrlLoss(renamed, loss);
    }
    this.quitting = true;
    // Writes still waiting for room go in now (the queue then may exceed its high-water mark, never silently).
    this.onRoom();
    this.engine.quit();
  }

  /** Resolves after `quit()` once the last byte is written, the file is closed and a worker has exited. */
  waitForQuit(): Promise<void> {
    return this.quitPromise;
  }

  async close(): Promise<void> {
    // Waiting writes first, as the queue drains: closing never turns them into drops.
    while (this.waiters.count > 0 && !this.failed && !this.quitting) await this.ready();
    this.quit();
    await this.quitPromise;
    if (this.summary) {
      this.summary = false;
      await this.writeSummary();
    }
    const staging = this.staging;
    this.staging = undefined;
    // Rejects when the upload fails: the object is then absent (never half there) and the staging copy is kept.
    await staging?.commit();
  }

  private summary = true;
  /** Writing to a url: the staging copy being written, uploaded by `close()`. */
  private staging: UrlStaging | undefined;
  /** Where the backend writes: `path`, or the staging copy of a url. */
  private localPath = '';

  /**
   * The sidecar summary (`<path>.json`), from the closed file read back once; the writer's failure is listed in its
   * errors. A summary that cannot be made is reported (error callbacks, `'error'` event), never thrown: the
   * recording itself is complete.
   */
  private async writeSummary(): Promise<void> {
    const errors = this.lastError ? [`${this.lastError.code}: ${this.lastError.message}`] : [];
    let reader: BagReader | undefined;
    try {
      reader = await BagReader.create(this.localPath, { tryToFix: true });
      writeSummaryFile(this.localPath, await summarizeBag(reader, { errors }));
    } catch (error) {
      this.report(
        BagError.wrap(error, 'IO_ERROR', 'cannot write the summary sidecar', { file: summaryPath(this.path) }),
      );
    } finally {
      reader?.close();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal Reports an error that happened on this writer's behalf (e.g. a `tapSource` conversion). */
  reportError(error: BagError): void {
    this.report(error);
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** The engines' view of this writer: counters and callbacks live here, whichever thread writes. */
  private readonly host: EngineHost = {
    written: (frames, bytes) => {
      this.settled += frames;
      this.writtenFrames += frames;
      this.writtenBytes += bytes;
    },
    committed: () => void this.commits++,
    dropped: (reason, error, report, count = 1, url, storageSide = false) => {
      this.settled += count;
      this.dropped[reason] += count;
      this.countDrop(reason, url ?? error.url ?? '', count, error, storageSide);
      this.lastRejection = error;
      if (report) this.report(error);
    },
    counters: () => this.counters.table(),
    producerCounters: () => this.producerCounters.table(),
    room: () => this.onRoom(),
    failed: (error) => {
      this.failed = true;
      this.lastError = error;
      this.report(error);
      // Nothing will make room any more: waiting writes fail with the reason, `ready()` waiters go on.
      this.waiters.failAll(error);
    },
    warn: (error) => this.report(error),
    split: (index, file, before) => {
      this.splitIndex = index;
      if (!before) this.staging?.segmentsClosed(file);
      for (const callback of before ? this.splitBefore : this.splitAfter) callback(index, file);
    },
    finished: () => {
      this.closed = true;
      this.quitting = true;
      this.resolveQuit();
    },
  };

  /** Stores a frame that passed the plugin stage; false (counted) when it was refused. */
  private store(
    frame: Frame,
    durable?: { resolve(ts: number): void; reject(error: unknown): void },
    lazy = false,
  ): boolean {
    let target = frame;
    if (this.remap) {
      const url = this.remap.map(frame.url, frame.serType, frame.schemaType);
      if (url === null) {
        this.refuse('plugin', new BagError('INVALID_ARGUMENT', 'url dropped by the write plugin', { url: frame.url }));
        return false;
      }
      if (url !== frame.url) {
        let names = this.renamedUrls.get(frame.url);
        if (!names) this.renamedUrls.set(frame.url, (names = new Set()));
        names.add(url);
        target = { ...frame, url };
      }
    }
    if (this.closed)
      return this.refuse('closed', new BagError('CLOSED', 'writer is closed', { file: this.path })) ?? false;
    if (this.failed) return this.refuse('storageError', this.lastError!) ?? false;
    this.handedOver++;
    return this.engine.submit(target, durable, lazy);
  }

  /** Validates and timestamps a frame; undefined (counted) when it is refused before the queue. */
  private accept(frame: Frame): Frame | undefined {
    if (this.quitting || this.closed)
      return this.refuse('closed', new BagError('CLOSED', 'writer is closed', { file: this.path }));
    if (!frame || typeof frame.url !== 'string' || frame.url.length === 0) {
      return this.refuse('emptyUrl', new BagError('INVALID_ARGUMENT', 'frame url must not be empty'));
    }
    if (
      !(frame.data instanceof Uint8Array) ||
      (frame.data.byteLength === 0 && (frame.data.buffer as { detached?: boolean }).detached)
    ) {
      // A detached buffer (given away earlier with `transferPayloads`) would otherwise pass as an empty payload.
      return this.refuse(
        'emptyUrl',
        new BagError('INVALID_ARGUMENT', 'frame data must be a Uint8Array (not detached)', { url: frame.url }),
      );
    }
    // VLink needs an explicit async_run(); starting here (before the clock is read) avoids silently filling a queue.
    if (!this.running && !this.config.syncMode) this.asyncRun();
    const timestamp =
      frame.timestamp < 0 || !Number.isFinite(frame.timestamp) ? this.clock.nowUs() : Math.floor(frame.timestamp);
    // A publish time is floored like the log time; anything but a finite number means "none" (= the log time).
    const p = frame.publishTime;
    const publishTime = p === undefined || !Number.isFinite(p) ? undefined : Math.floor(p);
    if (timestamp === frame.timestamp && publishTime === p) return frame;
    const out = { ...frame, timestamp };
    if (publishTime === undefined) delete out.publishTime;
    else out.publishTime = publishTime;
    return out;
  }

  private refuse(reason: DropReason, error: BagError): undefined {
    this.dropped[reason]++;
    this.countDrop(reason, error.url ?? '', 1, error, false);
    this.lastRejection = error;
    return undefined;
  }

  private countDrop(reason: DropReason, url: string, count: number, error: BagError, storageSide: boolean): void {
    this.counters.add(url, reason, count);
    if (!storageSide) {
      this.producerCounters.add(url, reason, count);
      this.engine?.countersChanged();
    }
    const now = performance.now();
    // One event when drops start, not one per frame: again only after a second without any.
    if (now - this.lastDropAt > 1000) this.dispatchEvent(new WriterDropEvent(reason, url || undefined, error));
    this.lastDropAt = now;
  }

  private storeOrReject(frame: Frame): Promise<number> {
    if (this.plugin) {
      this.plugin.onWrite(frame);
      return Promise.resolve(frame.timestamp);
    }
    return this.store(frame, undefined, true)
      ? Promise.resolve(frame.timestamp)
      : Promise.reject(this.lastRejection ?? new BagError('INTERNAL', 'frame refused'));
  }

  /** Frames left the queue: waiting writes whose source has room go first, in order; then `ready()` and `'drain'`. */
  private onRoom(): void {
    const force = this.closed || this.quitting;
    const go = (w: { frame: Frame; resolve(ts: number): void; reject(error: unknown): void }) => {
      if (this.closed) w.reject(new BagError('CLOSED', 'writer is closed', { file: this.path }));
      else this.storeOrReject(w.frame).then(w.resolve, w.reject);
    };
    if (this.waiters.release((size, url) => this.engine.hasRoom(size, url), go, force))
      this.dispatchEvent(new Event('drain'));
  }

  private report(error: BagError): void {
    for (const callback of this.errorCallbacks) {
      try {
        callback(error);
      } catch {
        // A throwing callback must not break the writer; the error is already recorded in stats().
      }
    }
    this.dispatchEvent(new WriterErrorEvent(error));
  }
}

const shared = new SharedWriters<BagWriter, BagWriterOptions>((path, options) => BagWriter.create(path, options));
