import type { BackendWriter, RecordingContext } from '../backend/backend.js';
import { backendFor } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { resolveWriterConfig, type ResolvedWriterConfig, type WriterConfig } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { BagPluginInterface, PluginDirection, UrlRemapCache } from '../plugins/bag-plugin.js';
import { ElapsedClock } from './elapsed-clock.js';
import { createRecordingContext } from './recording-context.js';
import { SchemaRegistry, type SchemaCallback } from './schema-registry.js';
import { scheduleSoon, unrefTimer } from '../util/schedule.js';
import { emptyDropCounters, type DropReason, type WriterStats } from './writer-stats.js';

export type WriterErrorCallback = (error: BagError) => void;

interface QueuedFrame {
  frame: Frame;
  durable?: { resolve(ts: number): void; reject(error: unknown): void };
}

/** How long one drain turn may hold the event loop before yielding (ms). */
const DRAIN_SLICE_MS = 8;

/**
 * Records frames into a bag; the file extension picks the backend (`.vdb`, `.vdbx`, `.vcap`, `.vcapx`).
 *
 * `push()` never waits for the disk: frames go to a bounded queue that is drained in slices between other work
 * (`syncMode: true` writes on the caller's stack instead, as VLink's sync mode does). Call `close()` (or `quit()` +
 * `waitForQuit()`) to finish the file; `await using writer = await BagWriter.create(...)` does it for you.
 */
export class BagWriter {
  readonly path: string;
  readonly config: ResolvedWriterConfig;
  readonly context: RecordingContext;

  private readonly backend: BackendWriter;
  private readonly schemas: SchemaRegistry;
  private readonly clock = new ElapsedClock();
  private readonly queue: QueuedFrame[] = [];
  private queueHead = 0;
  private queuedBytes = 0;
  private running = false;
  private drainScheduled = false;
  private quitting = false;
  private closed = false;
  private failed = false;
  private lastError: BagError | undefined;
  private writtenFrames = 0;
  private writtenBytes = 0;
  private commits = 0;
  private readonly dropped = emptyDropCounters();
  private readonly errorCallbacks: WriterErrorCallback[] = [];
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private readonly quitPromise: Promise<void>;
  private resolveQuit!: () => void;

  private constructor(path: string, config: ResolvedWriterConfig, context: RecordingContext, backend: BackendWriter, schemas: SchemaRegistry) {
    this.path = path;
    this.config = config;
    this.context = context;
    this.backend = backend;
    this.schemas = schemas;
    this.quitPromise = new Promise((resolve) => (this.resolveQuit = resolve));
  }

  /** Opens a new recording at `path` (an existing file is replaced, as VLink does). */
  static async create(path: string, config: Partial<WriterConfig> = {}): Promise<BagWriter> {
    if (typeof path !== 'string' || path.length === 0) throw new BagError('INVALID_ARGUMENT', 'bag path must not be empty');
    const backend = backendFor(path);
    const resolved = resolveWriterConfig(config);
    const schemas = new SchemaRegistry();
    let writer: BagWriter | undefined;
    const context = createRecordingContext(resolved, schemas, (index, file, before) => writer?.emitSplit(index, file, before));
    const backendWriter = await backend.createWriter(path, resolved, context);
    writer = new BagWriter(path, resolved, context, backendWriter, schemas);
    return writer;
  }

  /** Starts the background drain (no-op in `syncMode`); the first `push` starts it too. */
  asyncRun(): void {
    if (this.running || this.closed || this.config.syncMode) return;
    this.running = true;
    this.clock.restart();
    this.tickTimer = setInterval(() => this.tick(), 1000);
    unrefTimer(this.tickTimer);
    this.scheduleDrain();
  }

  /**
   * Queues a frame. A negative `timestamp` takes the writer's clock (µs since start). Returns the timestamp used, or
   * −1 when the frame was refused (empty url, writer closed, queue full; in `syncMode` also a storage rejection);
   * `stats().dropped` counts why.
   */
  push(frame: Frame): number {
    const accepted = this.accept(frame);
    if (accepted === undefined) return -1;
    if (this.plugin) {
      // The timestamp is resolved before the plugin (spec §2.9); what it emits is stored as emitted.
      this.plugin.onWrite(accepted);
      return accepted.timestamp;
    }
    return this.store(accepted) ? accepted.timestamp : -1;
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

  /** Like `push`, but resolves once the frame is committed to disk; rejects with the reason it was not. */
  pushDurable(frame: Frame): Promise<number> {
    const accepted = this.accept(frame);
    if (accepted === undefined) {
      return Promise.reject(this.lastRejection ?? new BagError('INVALID_ARGUMENT', 'frame refused'));
    }
    if (this.plugin) {
      return Promise.reject(new BagError('NOT_SUPPORTED', 'pushDurable cannot be combined with a write plugin (it may hold frames)'));
    }
    if (this.config.syncMode) {
      if (!this.writeNow(accepted)) return Promise.reject(this.lastRejection);
      return this.commitNow().then(() => accepted.timestamp);
    }
    return new Promise((resolve, reject) => this.enqueue({ frame: accepted, durable: { resolve, reject } }));
  }

  /** Embeds a schema (protobuf descriptor set, flatbuffers bfbs, …) for `name`; false on a conflict. */
  pushSchema(schema: SchemaData): boolean {
    try {
      const stored = this.schemas.add(schema);
      if (!this.closed) this.backend.writeSchema(stored);
      return true;
    } catch (error) {
      this.report(BagError.wrap(error, 'SCHEMA_CONFLICT', 'pushSchema failed'), false);
      return false;
    }
  }

  registerSchemaCallback(callback: SchemaCallback | undefined): void {
    this.schemas.setCallback(callback);
  }

  /** Loss ratio of a url in [0, 1] (> 1 is stored as −1, unknown), written when the file closes. */
  setUrlLoss(url: string, loss: number): void {
    this.backend.setUrlLoss(url, loss);
    this.losses.set(url, loss);
  }

  /** Error callback for storage errors and rejected frames; errors are never swallowed silently. */
  registerErrorCallback(callback: WriterErrorCallback): void {
    this.errorCallbacks.push(callback);
  }

  /** Split callback `(index, file, before)` for split recordings; see spec §4.3. */
  registerSplitCallback(callback: (index: number, file: string) => void, before = false): void {
    (before ? this.splitBefore : this.splitAfter).push(callback);
  }

  /** True once a storage error happened (frames after it are dropped); `stats().lastError` says which. */
  fail(): boolean {
    return this.failed;
  }

  stats(): WriterStats {
    return {
      queuedFrames: this.queue.length - this.queueHead,
      queuedBytes: this.queuedBytes,
      writtenFrames: this.writtenFrames,
      writtenBytes: this.writtenBytes,
      dropped: { ...this.dropped },
      commits: this.commits,
      currentFile: this.closed ? '' : safeCurrentFile(this.backend),
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
      for (const renamed of this.renamedUrls.get(url) ?? []) this.backend.setUrlLoss(renamed, loss);
    }
    this.quitting = true;
    if (this.config.syncMode || !this.running) {
      this.drainAll();
      this.finish();
    } else {
      this.scheduleDrain();
    }
  }

  /** Resolves after `quit()` once the last byte is written and the file is closed. */
  waitForQuit(): Promise<void> {
    return this.quitPromise;
  }

  async close(): Promise<void> {
    this.quit();
    await this.quitPromise;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // ---------------------------------------------------------------------------------------------------------------

  private plugin: BagPluginInterface | undefined;
  private remap: UrlRemapCache | undefined;
  private readonly renamedUrls = new Map<string, Set<string>>();
  private readonly losses = new Map<string, number>();

  /** Stores a frame that passed the plugin stage: straight to the backend in sync mode, else via the queue. */
  private store(frame: Frame): boolean {
    let target = frame;
    if (this.remap) {
      const url = this.remap.map(frame.url, frame.serType, frame.schemaType);
      if (url === null) {
        this.dropped.plugin++;
        return false;
      }
      if (url !== frame.url) {
        let names = this.renamedUrls.get(frame.url);
        if (!names) this.renamedUrls.set(frame.url, (names = new Set()));
        names.add(url);
        target = { ...frame, url };
      }
    }
    if (this.closed) return this.refuse('closed', new BagError('CLOSED', 'writer is closed', { file: this.path })) ?? false;
    if (this.config.syncMode) return this.writeNow(target);
    return this.enqueue({ frame: target });
  }

  private readonly splitBefore: Array<(index: number, file: string) => void> = [];
  private readonly splitAfter: Array<(index: number, file: string) => void> = [];
  private lastRejection: BagError | undefined;

  private emitSplit(index: number, file: string, before: boolean): void {
    for (const callback of before ? this.splitBefore : this.splitAfter) callback(index, file);
  }

  /** Validates and timestamps a frame; undefined (counted) when it is refused before the queue. */
  private accept(frame: Frame): Frame | undefined {
    if (this.quitting || this.closed) return this.refuse('closed', new BagError('CLOSED', 'writer is closed', { file: this.path }));
    if (!frame || typeof frame.url !== 'string' || frame.url.length === 0) {
      return this.refuse('emptyUrl', new BagError('INVALID_ARGUMENT', 'frame url must not be empty'));
    }
    if (!(frame.data instanceof Uint8Array)) {
      return this.refuse('emptyUrl', new BagError('INVALID_ARGUMENT', 'frame data must be a Uint8Array', { url: frame.url }));
    }
    const timestamp = frame.timestamp < 0 || !Number.isFinite(frame.timestamp) ? this.clock.nowUs() : Math.floor(frame.timestamp);
    return timestamp === frame.timestamp ? frame : { ...frame, timestamp };
  }

  private refuse(reason: DropReason, error: BagError): undefined {
    this.dropped[reason]++;
    this.lastRejection = error;
    return undefined;
  }

  private enqueue(item: QueuedFrame): boolean {
    const size = item.frame.data.length;
    const depth = this.queue.length - this.queueHead;
    if (depth >= this.config.maxTaskDepth) return this.rejectQueued(item, 'queueDepth', 'queue depth');
    if (this.queuedBytes + size > this.config.maxMemorySize) return this.rejectQueued(item, 'queueMemory', 'queue memory');
    this.queue.push(item);
    this.queuedBytes += size;
    // VLink needs an explicit async_run(); starting on the first push avoids silently filling the queue instead.
    if (!this.running) this.asyncRun();
    else this.scheduleDrain();
    return true;
  }

  private rejectQueued(item: QueuedFrame, reason: DropReason, what: string): false {
    const error = new BagError('QUEUE_FULL', `${what} limit reached; frame dropped`, { url: item.frame.url });
    this.refuse(reason, error);
    item.durable?.reject(error);
    return false;
  }

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    scheduleSoon(() => {
      this.drainScheduled = false;
      this.drainSlice();
    });
  }

  private drainSlice(): void {
    const deadline = performance.now() + DRAIN_SLICE_MS;
    let pendingCommit: QueuedFrame[] | undefined;
    while (this.queueHead < this.queue.length) {
      const item = this.takeNext();
      const ok = this.writeNow(item.frame);
      if (item.durable) {
        if (ok) (pendingCommit ??= []).push(item);
        else item.durable.reject(this.lastRejection);
      }
      if ((this.queueHead & 63) === 0 && performance.now() > deadline) break;
    }
    if (pendingCommit) this.commitFor(pendingCommit);
    if (this.queueHead < this.queue.length) this.scheduleDrain();
    else if (this.quitting) this.finish();
  }

  private drainAll(): void {
    let pendingCommit: QueuedFrame[] | undefined;
    while (this.queueHead < this.queue.length) {
      const item = this.takeNext();
      const ok = this.writeNow(item.frame);
      if (item.durable) {
        if (ok) (pendingCommit ??= []).push(item);
        else item.durable.reject(this.lastRejection);
      }
    }
    if (pendingCommit) this.commitFor(pendingCommit);
  }

  private takeNext(): QueuedFrame {
    const item = this.queue[this.queueHead]!;
    this.queue[this.queueHead] = undefined as unknown as QueuedFrame;
    this.queueHead++;
    this.queuedBytes -= item.frame.data.length;
    // Compact now and then instead of shift()-ing every frame (shift is O(n) on long queues).
    if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
    return item;
  }

  /** Writes one frame to the backend; false (counted, reported) when it was not stored. */
  private writeNow(frame: Frame): boolean {
    if (this.failed) {
      this.refuse('storageError', this.lastError ?? new BagError('IO_ERROR', 'writer failed'));
      return false;
    }
    try {
      this.backend.write(frame);
      this.writtenFrames++;
      this.writtenBytes += frame.data.length;
      return true;
    } catch (error) {
      const bagError = BagError.wrap(error, 'IO_ERROR', 'write failed', { file: this.path, url: frame.url });
      const reason: DropReason =
        bagError.code === 'SCHEMA_CONFLICT' ? 'schemaConflict' : bagError.code === 'LIMIT_REACHED' ? 'limit' : 'storageError';
      this.refuse(reason, bagError);
      this.report(bagError, reason === 'storageError');
      return false;
    }
  }

  private commitFor(items: QueuedFrame[]): void {
    try {
      this.backend.commit();
      this.commits++;
      for (const item of items) item.durable!.resolve(item.frame.timestamp);
    } catch (error) {
      const bagError = BagError.wrap(error, 'IO_ERROR', 'commit failed', { file: this.path });
      this.report(bagError, true);
      for (const item of items) item.durable!.reject(bagError);
    }
  }

  private async commitNow(): Promise<void> {
    this.backend.commit();
    this.commits++;
  }

  private tick(): void {
    if (this.closed || this.failed) return;
    try {
      this.backend.tick();
    } catch (error) {
      this.report(BagError.wrap(error, 'IO_ERROR', 'periodic commit failed', { file: this.path }), true);
    }
  }

  private report(error: BagError, fatal: boolean): void {
    if (fatal) {
      this.failed = true;
      this.lastError = error;
    }
    for (const callback of this.errorCallbacks) {
      try {
        callback(error);
      } catch {
        // A throwing callback must not break the writer; the error is already recorded in stats().
      }
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.tickTimer !== undefined) clearInterval(this.tickTimer);
    try {
      this.backend.close();
    } catch (error) {
      this.report(BagError.wrap(error, 'IO_ERROR', 'close failed', { file: this.path }), true);
    }
    this.resolveQuit();
  }
}

function safeCurrentFile(backend: BackendWriter): string {
  try {
    return backend.currentFile();
  } catch {
    return '';
  }
}
