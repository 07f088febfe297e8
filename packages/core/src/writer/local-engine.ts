import type { BackendWriter } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { scheduleSoon, unrefTimer } from '../util/schedule.js';
import type { Durable, EngineHost, WriteEngine } from './engine.js';
import { queueFullError, type SourceQueue, type SourceQueues } from './source-queues.js';
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
 * Writes on the producer's thread. `sync` is VLink's sync mode: the backend runs on the caller's stack, no timer. The
 * `queue` mode is the fallback where no worker can run (no Worker API, a backend without `workerModule`, or
 * `worker: false`): frames wait in a queue drained in slices of at most 8 ms between other work.
 */
export class LocalEngine implements WriteEngine {
  readonly mode: 'sync' | 'queue';
  private readonly queue: QueuedFrame[] = [];
  private head = 0;
  private bytes = 0;
  private running = false;
  private drainScheduled = false;
  private quitting = false;
  private closed = false;
  private failed: BagError | undefined;
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private countersTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly backend: BackendWriter,
    private readonly host: EngineHost,
    private readonly path: string,
    private readonly config: Pick<ResolvedWriterConfig, 'syncMode' | 'maxTaskDepth' | 'maxMemorySize'>,
    /** Per-source limits of the queue mode; sync mode has no queue, so nothing waits in it and they do not apply. */
    private readonly sources: SourceQueues,
  ) {
    this.mode = config.syncMode ? 'sync' : 'queue';
  }

  queuedFrames(): number {
    return this.queue.length - this.head;
  }

  queuedBytes(): number {
    return this.bytes;
  }

  start(): void {
    if (this.running || this.closed || this.mode === 'sync') return;
    this.running = true;
    this.tickTimer = setInterval(() => this.tick(), 1000);
    unrefTimer(this.tickTimer);
    this.scheduleDrain();
  }

  hasRoom(size: number, url?: string): boolean {
    if (this.mode === 'sync') return true;
    if (url !== undefined) {
      const { maxTaskDepth, maxMemorySize } = this.config;
      const queued = this.queue.length - this.head;
      return this.sources.hasRoom(url, size, queued, this.bytes, maxTaskDepth, maxMemorySize);
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
    const size = frame.data.length;
    const source = this.sources.of(frame.url);
    const { maxTaskDepth, maxMemorySize } = this.config;
    const refusal = this.sources.admit(
      source,
      size,
      this.queue.length - this.head,
      this.bytes,
      maxTaskDepth,
      maxMemorySize,
    );
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
    if (this.closed) return;
    try {
      this.backend.writeSchema(schema);
    } catch (error) {
      this.host.warn(BagError.wrap(error, 'SCHEMA_CONFLICT', 'pushSchema failed', { file: this.path }));
    }
  }

  setUrlLoss(url: string, loss: number): void {
    this.backend.setUrlLoss(url, loss);
  }

  countersChanged(): void {
    if (this.countersTimer !== undefined || this.closed || !this.backend.setCounters) return;
    // At most one hand-over a second: a firehose of drops costs one table, not one per drop.
    this.countersTimer = setTimeout(() => {
      this.countersTimer = undefined;
      if (this.closed || this.failed) return;
      try {
        this.backend.setCounters?.(this.host.counters());
      } catch (error) {
        this.fail(BagError.wrap(error, 'IO_ERROR', 'storing the counters failed', { file: this.path }));
      }
    }, 1000);
    unrefTimer(this.countersTimer);
  }

  currentFile(): string {
    if (this.closed) return '';
    try {
      return this.backend.currentFile();
    } catch {
      return '';
    }
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
    if (!pendingCommit) return;
    // A storage error rolls back what the backend had not committed (the open SQLite transaction, the open chunk),
    // frames written before it in this slice included: their durable pushes must fail, not resolve on an empty commit.
    if (this.failed) for (const item of pendingCommit) item.durable!.reject(this.failed);
    else this.commitFor(pendingCommit);
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
    if (this.failed) return this.drop('storageError', this.failed, false, frame.url);
    try {
      this.backend.write(frame);
      this.host.written(1, frame.data.length);
      return true;
    } catch (error) {
      const bagError = BagError.wrap(error, 'IO_ERROR', 'write failed', { file: this.path, url: frame.url });
      const reason: DropReason =
        bagError.code === 'SCHEMA_CONFLICT'
          ? 'schemaConflict'
          : bagError.code === 'LIMIT_REACHED'
            ? 'limit'
            : 'storageError';
      // A storage error is reported once, as the writer's failure; a rejection is reported as itself.
      if (reason === 'storageError') this.fail(bagError);
      return this.drop(reason, bagError, reason !== 'storageError', frame.url);
    }
  }

  private drop(reason: DropReason, error: BagError, report: boolean, url: string): false {
    this.lastDrop = error;
    this.host.dropped(reason, error, report, 1, url);
    return false;
  }

  private commitFor(items: QueuedFrame[]): void {
    try {
      this.backend.commit();
      this.host.committed();
      for (const item of items) item.durable!.resolve(item.frame.timestamp);
    } catch (error) {
      const bagError = BagError.wrap(error, 'IO_ERROR', 'commit failed', { file: this.path });
      this.fail(bagError);
      for (const item of items) item.durable!.reject(bagError);
    }
  }

  private tick(): void {
    if (this.closed || this.failed) return;
    try {
      this.backend.tick();
    } catch (error) {
      this.fail(BagError.wrap(error, 'IO_ERROR', 'periodic commit failed', { file: this.path }));
    }
  }

  private fail(error: BagError): void {
    this.failed ??= error;
    this.host.failed(error);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.tickTimer !== undefined) clearInterval(this.tickTimer);
    if (this.countersTimer !== undefined) clearTimeout(this.countersTimer);
    try {
      this.backend.setCounters?.(this.host.counters());
      this.backend.close();
    } catch (error) {
      this.fail(BagError.wrap(error, 'IO_ERROR', 'close failed', { file: this.path }));
    }
    this.host.finished();
  }
}
