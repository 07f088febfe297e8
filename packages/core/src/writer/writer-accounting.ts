import { BagError } from '../errors.js';
import { DropCounters } from './drop-counters.js';
import type { WriteEngine, WrittenTally } from './engine.js';
import { WriterDropEvent, WriterErrorEvent } from './writer-options.js';
import { emptyDropCounters, type DropReason, type WriterStats } from './writer-stats.js';

export type WriterErrorCallback = (error: BagError) => void;

/**
 * A writer's bookkeeping of what became of its frames: written, committed, dropped (per reason, and per url and
 * cause), the last error and rejection, and who is told about them. Every drop passes `drop()`, so the three views of
 * it — `stats().dropped`, the per-url table the file stores, and the `'drop'` event — never disagree. The counters
 * live on the producer's thread whichever engine writes: a worker reports back and this side counts.
 */
export class WriterAccounting {
  /** Frames handed to the engine, and those it reported back as written or dropped (for `waitForIdle`). */
  handedOver = 0;
  /** Frames dropped after they were handed to the engine (written ones are in `written`). */
  private settledDrops = 0;
  /** Frames and bytes stored, added to in place by the engine (see `WrittenTally`). */
  readonly written: WrittenTally = { frames: 0, bytes: 0 };
  commits = 0;
  lastError: BagError | undefined;
  /** Why the last frame was refused: what a rejected `write()` / `pushDurable()` rejects with. */
  lastRejection: BagError | undefined;
  private readonly dropped = emptyDropCounters();
  /** Every drop per url and cause, and those counted on this side only (a worker counts and stores its own). */
  readonly counters = new DropCounters();
  readonly producerCounters = new DropCounters();
  private lastDropAt = Number.NEGATIVE_INFINITY;
  private readonly errorCallbacks: WriterErrorCallback[] = [];

  /**
   * @param events where `'drop'` and `'error'` events are dispatched (the writer).
   * @param producerCountersChanged the producer-side table changed: the engine hands it to the storage side.
   */
  constructor(
    private readonly events: EventTarget,
    private readonly producerCountersChanged: () => void,
  ) {}

  /** The engine dropped `count` frames it was handed (`drop()` counts them). */
  settleDropped(count: number): void {
    this.settledDrops += count;
  }

  /** Frames handed to the engine that it has not yet reported as written or dropped. */
  unsettled(): boolean {
    return this.written.frames + this.settledDrops < this.handedOver;
  }

  /**
   * `count` frames of `url` did not reach the file. `storageSide`: counted where the file is written (a worker, which
   * stores its own counts), so only the overall table takes them.
   */
  drop(reason: DropReason, url: string, count: number, error: BagError, storageSide: boolean): void {
    this.dropped[reason] += count;
    this.counters.add(url, reason, count);
    if (!storageSide) {
      this.producerCounters.add(url, reason, count);
      this.producerCountersChanged();
    }
    const now = performance.now();
    // One event when drops start, not one per frame: again only after a second without any.
    if (now - this.lastDropAt > 1000) this.events.dispatchEvent(new WriterDropEvent(reason, url || undefined, error));
    this.lastDropAt = now;
    this.lastRejection = error;
  }

  /** A frame refused before it reached the queue: counted; undefined so `accept` can return it. */
  refuse(reason: DropReason, error: BagError): undefined {
    this.drop(reason, error.url ?? '', 1, error, false);
    return undefined;
  }

  /** `BagWriter.count`: a cause only the application knows, counted beside the writer's own. */
  countCause(url: string, cause: string, n: number): void {
    this.counters.add(url, cause, n);
    this.producerCounters.add(url, cause, n);
    this.producerCountersChanged();
  }

  onError(callback: WriterErrorCallback): void {
    this.errorCallbacks.push(callback);
  }

  /** Tells the error callbacks and `'error'` listeners; errors are never swallowed silently. */
  report(error: BagError): void {
    for (const callback of this.errorCallbacks) {
      try {
        callback(error);
      } catch {
        // A throwing callback must not break the writer; the error is already recorded in stats().
      }
    }
    this.events.dispatchEvent(new WriterErrorEvent(error));
  }

  snapshot(engine: WriteEngine, closed: boolean): WriterStats {
    return {
      mode: engine.mode,
      queuedFrames: engine.queuedFrames(),
      queuedBytes: engine.queuedBytes(),
      writtenFrames: this.written.frames,
      writtenBytes: this.written.bytes,
      dropped: { ...this.dropped },
      droppedByUrl: this.counters.table(),
      commits: this.commits,
      currentFile: closed ? '' : engine.currentFile(),
      lastError: this.lastError,
    };
  }
}

/**
 * The checks of `BagWriter.setUrlLoss`'s arguments. A number keeps VLink's meaning (> 1: unknown); anything else was
 * stored as a loss of 0 in a `.vcap` and as unknown in a `.vdb`.
 */
export function checkLossArguments(url: string, loss: number): void {
  if (typeof url !== 'string' || url.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'setUrlLoss: url must be a non-empty string');
  if (typeof loss !== 'number' || Number.isNaN(loss))
    throw new BagError('INVALID_ARGUMENT', `setUrlLoss: loss must be a ratio (a number), got ${String(loss)}`, { url });
}

/** The checks of `BagWriter.count`'s arguments (the writer checks that it is still open). */
export function checkCountArguments(url: string, cause: string, n: number): void {
  if (typeof url !== 'string' || url.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'count: url must be a non-empty string');
  if (typeof cause !== 'string' || cause.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'count: cause must be a non-empty string', { url });
  if (!Number.isSafeInteger(n) || n <= 0)
    throw new BagError('INVALID_ARGUMENT', `count: n must be a positive integer, got ${n}`, { url });
}
