import type { RecordingContext } from '../backend/backend.js';
import { extensionOf } from '../backend/registry.js';
import { BagError } from '../errors.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import { companionMetaFrame, type CompanionMeta } from '../model/companion-meta.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { BagPluginInterface } from '../plugins/bag-plugin.js';
import { ElapsedClock } from './elapsed-clock.js';
import type { Durable, EngineHost, WriteEngine, WriterMode } from './engine.js';
import { refusalOf, withResolvedTimes } from './frame-admission.js';
import { openWriteEngine, prepareRecording } from './open-engine.js';
import { createRecordingContext } from './recording-context.js';
import type { RecordingOutput } from './recording-output.js';
import { SchemaRegistry, type SchemaCallback } from './schema-registry.js';
import { SharedWriters } from './shared-writers.js';
import type { SourceQueues } from './source-queues.js';
import { SplitNotifications } from './split-notifications.js';
import { WorkerEngine } from './worker-engine.js';
import { engineHostFor } from './writer-engine-host.js';
import {
  checkCountArguments,
  checkLossArguments,
  WriterAccounting,
  type WriterErrorCallback,
} from './writer-accounting.js';
import type { BagWriterOptions } from './writer-options.js';
import { WritePluginStage } from './write-plugin-stage.js';
import { WriteWaiters } from './write-waiters.js';
import type { WriterStats } from './writer-stats.js';
import { checkCallback } from '../util/callback-check.js';

export { WriterDropEvent, WriterErrorEvent } from './writer-options.js';
export type { BagWriterOptions } from './writer-options.js';
export type { WriterErrorCallback } from './writer-accounting.js';

/**
 * Records frames into a bag; the file extension picks the backend (`.vdb`, `.vdbx`, `.vcap`, `.vcapx`).
 *
 * `push()` never waits for the disk. In async mode (the default) the backend runs in a worker: frames are batched,
 * handed over without blocking, and written there; where no worker can run, a bounded same-thread queue drained in
 * slices takes its place. `syncMode: true` writes on the caller's stack, as VLink's sync mode does. Call `close()`
 * (or `quit()` + `waitForQuit()`) to finish the file; `await using writer = await BagWriter.create(...)` does it.
 */
export class BagWriter extends EventTarget {
  private engine!: WriteEngine;
  private readonly clock = new ElapsedClock();
  private running = false;
  private quitting = false;
  private closed = false;
  private failed = false;
  /** Written, committed and dropped frames, errors and who is told of them (see writer-accounting.ts). */
  private readonly accounting = new WriterAccounting(this, () => this.engine?.countersChanged());
  /** `write()` and `ready()` calls waiting for room in their source's queue. */
  private readonly waiters: WriteWaiters;
  /** The engines' view of this writer (see writer-engine-host.ts). */
  private readonly host: EngineHost;
  private readonly splits = new SplitNotifications();
  private readonly plugins = new WritePluginStage();
  private readonly quitPromise: Promise<void>;
  private resolveQuit!: () => void;

  private constructor(
    readonly path: string,
    readonly config: ResolvedWriterConfig,
    readonly context: RecordingContext,
    private readonly schemas: SchemaRegistry,
    sources: SourceQueues,
    /** Where the backend writes, and the summary and upload that follow the closed file. */
    private readonly output: RecordingOutput,
  ) {
    super();
    this.waiters = new WriteWaiters(sources);
    this.quitPromise = new Promise((resolve) => (this.resolveQuit = resolve));
    this.host = engineHostFor({
      accounting: this.accounting,
      waiters: this.waiters,
      splits: this.splits,
      output,
      report: (error) => this.report(error),
      room: () => this.onRoom(),
      markFailed: () => void (this.failed = true),
      markFinished: () => {
        this.closed = this.quitting = true;
        this.resolveQuit();
      },
    });
  }

  /**
   * Opens a new recording at `path` (an existing file is replaced, as VLink does). Rejects with the backend's error
   * when the file cannot be created, in every mode.
   */
  static async create(path: string, options: BagWriterOptions = {}): Promise<BagWriter> {
    const setup = await prepareRecording(path, options);
    const schemas = new SchemaRegistry();
    let writer: BagWriter | undefined;
    const context = createRecordingContext(setup.config, schemas, (index, file, before) =>
      writer?.host.split(index, file, before),
    );
    writer = new BagWriter(path, setup.config, context, schemas, setup.sources, setup.output);
    writer.engine = await openWriteEngine(writer.host, { ...setup, context, schemas });
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
    const busy = () => this.waiters.count > 0 || this.engine.queuedFrames() > 0 || this.accounting.unsettled();
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
    return this.splits.index;
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
    const plugin = this.plugins.plugin;
    if (plugin) {
      // The timestamp is resolved before the plugin (format reference §2.9); what it emits is stored as emitted.
      plugin.onWrite(accepted);
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
    checkCountArguments(url, cause, n);
    if (this.closed || this.quitting)
      throw new BagError('CLOSED', 'count after close: the counters are already stored', { file: this.path, url });
    this.accounting.countCause(url, cause, n);
  }

  /**
   * Lossless `push` for producers that can wait (beyond VLink): resolves with the timestamp at once while the frame's
   * source queue is below its high-water mark (half its limits, and half the shared limits or of its fair share; in
   * worker mode at most what the worker writes in 25 ms, see `InflightGauge.markDepth`), and otherwise once it has
   * drained below it, so a full queue never drops a frame. A source's frames keep their order, also when several
   * `write()`s wait; a source that waits does not hold back another's. Rejects (and drops nothing silently) when the
   * frame is refused for a reason waiting cannot fix: an empty url, a closed or failed writer. The payload must stay
   * unchanged until the promise resolves (it is then copied, as `push` copies it).
   */
  write(frame: Frame): Promise<number> {
    const accepted = this.accept(frame);
    if (accepted === undefined) return this.refused();
    const queuedBehind = this.waiters.count > 0 && this.waiters.waiting(accepted.url);
    return (!queuedBehind && this.storeOrReject(accepted, true)) || this.waiters.wait(accepted);
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
    if (accepted === undefined) return this.refused();
    // A plugin may hold frames, so nothing could say when one reached the disk.
    if (this.plugins.plugin)
      return Promise.reject(new BagError('NOT_SUPPORTED', 'pushDurable cannot be combined with a write plugin'));
    return new Promise((resolve, reject) => {
      if (!this.store(accepted, { resolve, reject })) reject(this.accounting.lastRejection);
    });
  }

  /** Binds a write plugin (`onWrite` before storage, `convertUrlMeta` renames or drops urls); undefined unbinds. */
  bindPluginInterface(plugin: BagPluginInterface | undefined): void {
    this.plugins.bind(plugin, (emitted) => void this.store(emitted));
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
    checkCallback('the schema callback', callback);
    this.schemas.setCallback(callback);
    if (this.engine instanceof WorkerEngine) this.engine.schemasChanged();
  }

  /**
   * Loss ratio of a url in [0, 1] (> 1 is stored as −1, unknown), written when the file closes. Throws
   * `INVALID_ARGUMENT` for an empty url or a loss that is not a number (or NaN).
   */
  setUrlLoss(url: string, loss: number): void {
    checkLossArguments(url, loss);
    if (!this.quitting) this.engine.setUrlLoss(url, loss);
    this.plugins.setLoss(url, loss);
  }

  /** Error callback for storage errors and rejected frames; errors are never swallowed silently. */
  registerErrorCallback(callback: WriterErrorCallback): void {
    checkCallback('the error callback', callback, false);
    this.accounting.onError(callback);
  }

  /** Split callback `(index, file, before)` for split recordings; see format reference §4.3. In worker mode it is a notification. */
  registerSplitCallback(callback: (index: number, file: string) => void, before = false): void {
    checkCallback('the split callback', callback, false);
    this.splits.register(callback, before);
  }

  /** True once a storage error happened (frames after it are dropped); `stats().lastError` says which. */
  fail(): boolean {
    return this.failed;
  }

  stats(): WriterStats {
    return this.accounting.snapshot(this.engine, this.closed);
  }

  /** Stops accepting frames, writes what is queued, then closes the file (header `complete`). */
  quit(): void {
    if (this.quitting) return;
    // A buffering plugin hands over what it holds before the queue stops taking frames; VLink writes a loss at
    // close for the url and for every name a write plugin renamed it to.
    this.plugins.quit((url, loss) => this.engine.setUrlLoss(url, loss));
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
    // Rejects when the upload of a url fails (see RecordingOutput.finish).
    await this.output.finish(this.accounting.lastError, (error) => this.report(error));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal Reports an error that happened on this writer's behalf (e.g. a `tapSource` conversion). */
  reportError(error: BagError): void {
    this.report(error);
  }

  // ---------------------------------------------------------------------------------------------------------------

  /** Stores a frame that passed the plugin stage; false (counted) when it was refused. */
  private store(frame: Frame, durable?: Durable, lazy = false): boolean {
    const target = this.plugins.plugin ? this.plugins.route(frame) : frame;
    if (target === null) {
      const error = new BagError('INVALID_ARGUMENT', 'url dropped by the write plugin', { url: frame.url });
      return this.accounting.refuse('plugin', error) ?? false;
    }
    if (this.closed)
      return this.accounting.refuse('closed', new BagError('CLOSED', 'writer is closed', { file: this.path })) ?? false;
    if (this.failed) return this.accounting.refuse('storageError', this.accounting.lastError!) ?? false;
    this.accounting.handedOver++;
    return this.engine.submit(target, durable, lazy);
  }

  /** Validates and timestamps a frame (see frame-admission.ts); undefined (counted) when it is refused. */
  private accept(frame: Frame): Frame | undefined {
    const refusal = refusalOf(frame, this.path, this.quitting || this.closed);
    if (refusal) return this.accounting.refuse(refusal.reason, refusal.error);
    // VLink needs an explicit async_run(); starting here (before the clock is read) avoids silently filling a queue.
    if (!this.running && !this.config.syncMode) this.asyncRun();
    return withResolvedTimes(frame, this.clock);
  }

  /** Stores a frame for `write()` (rejects: refused); `belowMark`: undefined (wait) above its source's mark. */
  private storeOrReject(frame: Frame, belowMark = false): Promise<number> | undefined {
    const { engine } = this;
    const plugin = this.plugins.plugin;
    let stored: boolean | undefined;
    // One step (one url lookup) where no plugin stands between the writer and the engine.
    if (belowMark && engine.submitBelowMark && !plugin && !this.closed && !this.failed) {
      if ((stored = engine.submitBelowMark(frame)) === undefined) return undefined;
      this.accounting.handedOver++;
    } else if (belowMark && !engine.hasRoom(frame.data.byteLength, frame.url)) return undefined;
    else if (plugin) plugin.onWrite(frame);
    else stored = this.store(frame, undefined, true);
    return stored !== false ? Promise.resolve(frame.timestamp) : this.refused();
  }

  /** The promise of a `write()` or `pushDurable()` whose frame was refused: the reason, counted already. */
  private refused(): Promise<never> {
    return Promise.reject(this.accounting.lastRejection ?? new BagError('INVALID_ARGUMENT', 'frame refused'));
  }

  /** Frames left the queue: waiting writes whose source has room go first, in order; then `ready()` and `'drain'`. */
  private onRoom(): void {
    const force = this.closed || this.quitting;
    const go = (w: { frame: Frame; resolve(ts: number): void; reject(error: unknown): void }) => {
      if (this.closed) w.reject(new BagError('CLOSED', 'writer is closed', { file: this.path }));
      else this.storeOrReject(w.frame)!.then(w.resolve, w.reject);
    };
    if (this.waiters.release((size, url) => this.engine.hasRoom(size, url), go, force))
      this.dispatchEvent(new Event('drain'));
  }

  private report(error: BagError): void {
    this.accounting.report(error);
  }
}

const shared = new SharedWriters<BagWriter, BagWriterOptions>((path, options) => BagWriter.create(path, options));
