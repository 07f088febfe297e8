import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { scheduleSoon } from '../util/schedule.js';
import { refusalOf } from '../writer/frame-admission.js';
import { resolveProcessorConfig, type ProcessorConfig } from './processor-config.js';
import { ReorderQueue, type QueueEntry } from './reorder-queue.js';
import { checkCallback } from '../util/callback-check.js';

/** Longest a worker turn releases frames back to back before yielding to the event loop (ms). */
const SLICE_MS = 8;

/**
 * A reorder buffer keyed by a data-plane timestamp (VLink `BagProcessor`, format reference §8, newest algorithm): frames pushed
 * out of order (several sensors, several files) come out in data time, with output timestamps mapped onto one
 * strictly increasing timeline.
 *
 * JavaScript version of VLink's worker thread: `push` only queues and schedules a worker turn; the turn releases the
 * oldest frame while the window rule holds, one per check, so output callbacks run outside the producer's stack (as
 * they do on VLink's worker thread). Backpressure is the Node-streams idiom: `push` always takes the frame and returns
 * false once the payload bytes held reach `maxCacheSize`; await `waitForRoom()` before pushing more. A host that
 * cannot wait (a bag plugin) calls `releaseOverflow()` instead. `flush()` and `reset()` are synchronous.
 */
export class BagProcessor {
  readonly config: ProcessorConfig;
  private readonly queue = new ReorderQueue();
  private bytes = 0;
  private output: ((frame: Frame) => void) | undefined;
  private errorCallback: ((error: BagError) => void) | undefined;
  private lastError: BagError | undefined;
  private scheduled = false;
  private drainTimer: ReturnType<typeof setTimeout> | undefined;
  private roomWaiters: Array<() => void> = [];
  private idleWaiters: Array<() => void> = [];
  private closed = false;
  // Input anchor (format reference §8 steps 2–4) and output timeline (format reference §8 "output timestamp mapping").
  private lastDataTs: number | undefined;
  private lastFrameTs = 0;
  private dataAnchor: number | undefined;
  private tsAnchor = 0;
  private lastOut: number | undefined;

  constructor(config: Partial<ProcessorConfig> = {}) {
    this.config = resolveProcessorConfig(config);
  }

  /** Where released frames go; `frame.timestamp` is the output timestamp. Runs outside `push`. */
  registerOutputCallback(callback: ((frame: Frame) => void) | undefined): void {
    checkCallback('the output callback', callback);
    this.output = callback;
  }

  /** A throwing output callback does not stop the processor; the error is reported here and kept. */
  registerErrorCallback(callback: ((error: BagError) => void) | undefined): void {
    checkCallback('the error callback', callback);
    this.errorCallback = callback;
  }

  getLastError(): BagError | undefined {
    return this.lastError;
  }

  /** Payload bytes and frames held now. */
  stats(): { frames: number; bytes: number } {
    return { frames: this.queue.size, bytes: this.bytes };
  }

  /**
   * Queues a frame by its data timestamp (µs; negative = unknown, filled from the last one). Returns false when the
   * cache is at or over `maxCacheSize`: the frame is taken, but await `waitForRoom()` before pushing more. Throws
   * `INVALID_ARGUMENT` for a frame `BagWriter.push` would refuse as malformed, a non-finite frame timestamp or a data
   * timestamp that is not a number.
   */
  push(dataTimestamp: number, frame: Frame): boolean {
    if (this.closed) throw new BagError('CLOSED', 'processor is closed');
    // The writer's own checks: a frame that passes here is one a BagWriter takes (a null frame or a missing payload
    // threw a TypeError, a string payload came out of the reorder queue as if it were bytes).
    const refusal = refusalOf(frame, '', false);
    if (refusal) throw refusal.error;
    if (typeof dataTimestamp !== 'number')
      throw new BagError('INVALID_ARGUMENT', 'the data timestamp must be a number of µs', { url: frame.url });
    if (!Number.isFinite(frame.timestamp))
      throw new BagError('INVALID_ARGUMENT', 'frame timestamp must be finite', { url: frame.url });
    const entry = this.resolve(Number.isFinite(dataTimestamp) ? dataTimestamp : -1, frame);
    this.queue.insert(entry);
    this.bytes += entry.bytes;
    this.schedule();
    return this.bytes < this.config.maxCacheSize;
  }

  /** Resolves when the bytes held are below `maxCacheSize` (at once if they are). */
  waitForRoom(): Promise<void> {
    if (this.bytes < this.config.maxCacheSize || this.queue.size === 0) return Promise.resolve();
    this.schedule();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Resolves once the worker has released everything the window rule allows (what remains waits for newer data). */
  idle(): Promise<void> {
    if (!this.scheduled && !this.shouldRelease(performance.now())) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Releases the oldest frames now while the cache is at or over `maxCacheSize`; for hosts that cannot wait. */
  releaseOverflow(): void {
    while (this.queue.size > 0 && this.bytes >= this.config.maxCacheSize) this.release(this.queue.shift()!);
    this.notify();
  }

  /** Releases every queued frame in order, now, then starts a new timeline (every anchor reset). */
  flush(): void {
    while (this.queue.size > 0) this.release(this.queue.shift()!);
    this.resetAnchors();
    this.notify();
  }

  /** Discards every queued frame without emitting it and resets the anchors (newest VLink only). */
  reset(): void {
    this.queue.clear();
    this.bytes = 0;
    this.resetAnchors();
    this.notify();
  }

  /** Flushes and refuses further pushes (VLink's destructor releases what is left). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    if (this.drainTimer !== undefined) clearTimeout(this.drainTimer);
  }

  [Symbol.dispose](): void {
    this.close();
  }

  // ---------------------------------------------------------------------------------------------------------------

  private resolve(input: number, frame: Frame): QueueEntry {
    let dataTs = input;
    let valid = true;
    if (dataTs < 0) {
      if (this.lastDataTs === undefined) valid = false;
      else dataTs = this.lastDataTs + (frame.timestamp - this.lastFrameTs);
    } else if (
      this.lastDataTs !== undefined &&
      this.config.maxJumpTime > 0 &&
      Math.abs(dataTs - this.lastDataTs) > this.config.maxJumpTime * 1000
    ) {
      dataTs = this.lastDataTs + (frame.timestamp - this.lastFrameTs);
    }
    if (valid) {
      this.lastDataTs = dataTs;
      this.lastFrameTs = frame.timestamp;
    }
    const copy = { ...frame, data: this.config.copyData ? frame.data.slice() : frame.data };
    return {
      frame: copy,
      dataTs: valid ? dataTs : -1,
      valid,
      key: valid ? dataTs : frame.timestamp,
      bytes: frame.data.length,
      enqueuedAt: performance.now(),
    };
  }

  /** The window rule (newest), plus the optional wall-clock drain. */
  private shouldRelease(now: number): boolean {
    const oldest = this.queue.oldest;
    if (!oldest) return false;
    if (this.bytes >= this.config.maxCacheSize) return true;
    const newest = this.queue.newest!;
    if (oldest.valid !== newest.valid) return true;
    if (newest.key - oldest.key >= this.config.minCacheTime * 1000) return true;
    return this.config.drainAfterMs > 0 && now - oldest.enqueuedAt >= this.config.drainAfterMs;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    scheduleSoon(() => this.work());
  }

  /** A worker turn: one frame per check while the rule holds, yielding after a slice. */
  private work(): void {
    this.scheduled = false;
    const start = performance.now();
    let now = start;
    while (this.shouldRelease(now)) {
      this.release(this.queue.shift()!);
      now = performance.now();
      if (now - start > SLICE_MS) {
        this.notify();
        this.schedule();
        return;
      }
    }
    this.notify();
    this.armDrain(now);
  }

  private release(entry: QueueEntry): void {
    this.bytes -= entry.bytes;
    let out: number;
    if (!entry.valid) {
      out = this.monotonic(entry.frame.timestamp);
    } else if (this.dataAnchor === undefined) {
      out = this.monotonic(entry.frame.timestamp);
      this.dataAnchor = entry.dataTs;
      this.tsAnchor = out;
    } else {
      out = this.monotonic(this.tsAnchor + (entry.dataTs - this.dataAnchor));
    }
    this.lastOut = out;
    entry.frame.timestamp = out;
    try {
      this.output?.(entry.frame);
    } catch (error) {
      this.lastError = BagError.wrap(error, 'INTERNAL', 'processor output callback threw', { url: entry.frame.url });
      this.errorCallback?.(this.lastError);
    }
  }

  private monotonic(out: number): number {
    return this.lastOut !== undefined && out <= this.lastOut ? this.lastOut + 1 : out;
  }

  private resetAnchors(): void {
    this.lastDataTs = undefined;
    this.lastFrameTs = 0;
    this.dataAnchor = undefined;
    this.tsAnchor = 0;
    this.lastOut = undefined;
  }

  private notify(): void {
    if (this.roomWaiters.length > 0 && (this.bytes < this.config.maxCacheSize || this.queue.size === 0)) {
      const waiters = this.roomWaiters;
      this.roomWaiters = [];
      for (const resolve of waiters) resolve();
    }
    if (this.idleWaiters.length > 0 && !this.scheduled && !this.shouldRelease(performance.now())) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** With the wall-clock drain on, wakes the worker when the oldest frame has waited `drainAfterMs`. */
  private armDrain(now: number): void {
    if (this.config.drainAfterMs <= 0 || this.drainTimer !== undefined || this.closed) return;
    const oldest = this.queue.oldest;
    if (!oldest) return;
    const wait = Math.max(0, oldest.enqueuedAt + this.config.drainAfterMs - now);
    this.drainTimer = setTimeout(() => {
      this.drainTimer = undefined;
      this.work();
    }, Math.ceil(wait));
  }
}
