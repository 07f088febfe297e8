import type { BackendWriter } from '../backend/backend.js';
import type { BagError } from '../errors.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { unstorableNames } from '../model/url-identity.js';
import { scheduleSoon } from '../util/schedule.js';
import type { Durable, EngineHost, WriteEngine, WrittenTally } from './engine.js';
import { queueFullError, type SharedQueue, type SourceQueue, type SourceQueues } from './source-queues.js';
import { StorageLoop } from './storage-loop.js';
import { UrlIds } from './frame-admission.js';
import type { DropReason } from './writer-stats.js';

interface QueuedFrame {
  frame: Frame;
  durable: Durable | undefined;
  /** Undefined in sync mode (no queue). */
  source?: SourceQueue;
}

/** How long one drain turn may hold the event loop before yielding (ms). */
const DRAIN_SLICE_MS = 8;

/**
 * Writes on the producer's thread. `sync` is VLink's sync mode: the backend runs on the caller's stack, no tick. The
 * `queue` mode is the fallback where no worker can run (no Worker API, a backend without `workerModule`, or
 * `worker: false`): frames wait in a queue drained in slices of at most 8 ms between other work. How a frame is
 * stored, dropped or committed is the `StorageLoop`'s (the worker uses the same); this engine adds the queue.
 */
export class LocalEngine implements WriteEngine {
  readonly mode: 'sync' | 'queue';
  private readonly queue: QueuedFrame[] = [];
  private head = 0;
  private bytes = 0;
  private readonly sharedQueue: SharedQueue = { frames: 0, bytes: 0, depth: 0, maxBytes: 0, markDepth: 0 };
  private running = false;
  private drainScheduled = false;
  private quitting = false;
  private closed = false;
  private readonly storage: StorageLoop;
  /** Worker frames cross with their url's id; here core assigns them (`BackendWriter.write`). */
  private readonly urlIds = new UrlIds();
  /** The host's tally, in a field of its own: read once per stored frame. */
  private readonly written: WrittenTally;
  /** The url and ser of the last frame queued, known storable (`submit`). */
  private storableUrl: string | undefined;
  private storableSer: string | undefined;

  constructor(
    private readonly backend: BackendWriter,
    private readonly host: EngineHost,
    private readonly path: string,
    private readonly config: Pick<ResolvedWriterConfig, 'syncMode' | 'maxTaskDepth' | 'maxMemorySize'>,
    /** Per-source limits of the queue mode; sync mode has no queue, so nothing waits in it and they do not apply. */
    private readonly sources: SourceQueues,
  ) {
    this.mode = config.syncMode ? 'sync' : 'queue';
    this.written = host.written;
    this.storage = new StorageLoop(backend, {
      path,
      counters: () => host.counters(),
      onTimerFailure: (error) => host.failed(error),
    });
  }

  queuedFrames(): number {
    return this.queue.length - this.head;
  }

  queuedBytes(): number {
    return this.bytes;
  }

  /**
   * The shared queue and its limits, as `SourceQueues` weighs a source against them: one object refilled per call,
   * since `submit` asks on every push and a push should not allocate for it.
   */
  private shared(): SharedQueue {
    const shared = this.sharedQueue;
    shared.frames = this.queue.length - this.head;
    shared.bytes = this.bytes;
    shared.depth = this.config.maxTaskDepth;
    shared.maxBytes = this.config.maxMemorySize;
    // Its queue is sized in frames only (no worker rate to size it in time): the mark is half of it.
    shared.markDepth = this.config.maxTaskDepth / 2;
    return shared;
  }

  start(): void {
    if (this.running || this.closed || this.mode === 'sync') return;
    this.running = true;
    this.storage.startTicking({ unref: true });
    this.scheduleDrain();
  }

  hasRoom(size: number, url?: string): boolean {
    if (this.mode === 'sync') return true;
    if (url !== undefined) {
      return this.sources.hasRoom(url, size, this.shared());
    }
    return (
      this.queue.length - this.head < Math.max(1, this.config.maxTaskDepth >> 1) &&
      (this.bytes === 0 || this.bytes + size <= this.config.maxMemorySize / 2)
    );
  }

  submit(frame: Frame, durable?: Durable): boolean {
    if (this.mode === 'sync') {
      if (!this.writeNow(frame)) {
        durable?.reject(this.lastDrop);
        return false;
      }
      if (durable) this.commitFor([{ frame, durable }]);
      return true;
    }
    // A url or ser UTF-8 cannot store is refused while the producer still hears of it (push() returns -1, write()
    // rejects), as sync mode and a worker's producer refuse it, not once the frame is written after write() resolved.
    // Checked again only where the pair differs from the last frame's: two compares for a run of one url.
    if (frame.url !== this.storableUrl || frame.serType !== this.storableSer) {
      const unstorable = unstorableNames(frame.url, frame.serType, { file: this.path, url: frame.url });
      if (unstorable) {
        durable?.reject(unstorable);
        return this.drop('invalidFrame', unstorable, false, frame.url);
      }
      this.storableUrl = frame.url;
      this.storableSer = frame.serType;
    }
    const size = frame.data.length;
    const source = this.sources.of(frame.url);
    const refusal = this.sources.admit(source, size, this.shared());
    if (refusal) {
      const error = queueFullError(refusal, frame.url);
      durable?.reject(error);
      return this.drop(refusal.reason, error, false, frame.url);
    }
    this.queue.push({ frame, durable, source });
    this.sources.add(source, size, false);
    this.bytes += size;
    // VLink needs an explicit async_run(); starting on the first push avoids silently filling the queue instead.
    if (!this.running) this.start();
    else this.scheduleDrain();
    return true;
  }

  writeSchema(schema: SchemaData): void {
    const rejected = this.storage.writeSchema(schema);
    if (rejected) this.host.warn(rejected);
  }

  setUrlLoss(url: string, loss: number): void {
    this.backend.setUrlLoss(url, loss);
  }

  countersChanged(): void {
    this.storage.countersChanged();
  }

  currentFile(): string {
    return this.storage.currentFile();
  }

  quit(): void {
    if (this.quitting) return;
    this.quitting = true;
    if (this.mode === 'sync' || !this.running) {
      this.drain(Infinity);
      this.finish();
    } else {
      this.scheduleDrain();
    }
  }

  // ---------------------------------------------------------------------------------------------------------------

  private lastDrop: BagError | undefined;

  private scheduleDrain(): void {
    if (this.drainScheduled) return;
    this.drainScheduled = true;
    scheduleSoon(() => {
      this.drainScheduled = false;
      this.drain(performance.now() + DRAIN_SLICE_MS);
      this.host.room();
      if (this.head < this.queue.length) this.scheduleDrain();
      else if (this.quitting) this.finish();
    });
  }

  private drain(deadline: number): void {
    let pendingCommit: QueuedFrame[] | undefined;
    while (this.head < this.queue.length) {
      const item = this.takeNext();
      const ok = this.writeNow(item.frame);
      if (item.durable) {
        if (ok) (pendingCommit ??= []).push(item);
        else item.durable.reject(this.lastDrop);
      }
      if ((this.head & 63) === 0 && performance.now() > deadline) break;
    }
    if (pendingCommit) this.commitFor(pendingCommit);
  }

  private takeNext(): QueuedFrame {
    const item = this.queue[this.head]!;
    this.queue[this.head] = undefined as unknown as QueuedFrame;
    this.head++;
    this.bytes -= item.frame.data.length;
    if (item.source) this.sources.release(item.source, 1, item.frame.data.length);
    // Compact now and then instead of shift()-ing every frame (shift is O(n) on long queues).
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return item;
  }

  /** Writes one frame; false (counted and reported through the host) when it was not stored. */
  private writeNow(frame: Frame): boolean {
    const storage = this.storage;
    if (storage.write(frame, this.urlIds.of(frame.url))) {
      const written = this.written;
      written.frames++;
      written.bytes += frame.data.length;
      return true;
    }
    const reason = storage.dropReason;
    const error = storage.dropError!;
    // A storage error is reported once, as the writer's failure; a rejection is reported as itself.
    if (storage.dropFailedWriter) this.host.failed(error);
    return this.drop(reason, error, reason !== 'storageError', frame.url);
  }

  private drop(reason: DropReason, error: BagError, report: boolean, url: string): false {
    this.lastDrop = error;
    this.host.dropped(reason, error, report, 1, url);
    return false;
  }

  private commitFor(items: QueuedFrame[]): void {
    const failedBefore = this.storage.failed;
    const error = this.storage.commit();
    if (error === undefined) {
      this.host.committed();
      for (const item of items) item.durable!.resolve(item.frame.timestamp);
      return;
    }
    // A failed commit fails the writer now; a storage error before it was reported when it happened.
    if (error !== failedBefore) this.host.failed(error);
    for (const item of items) item.durable!.reject(error);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    const error = this.storage.close();
    if (error) this.host.failed(error);
    this.host.finished();
  }
}
