import type { SharedProgress } from '../writer-worker/progress.js';

/**
 * How much of an async writer's queue is in flight across both threads, which is what its limits bound: frames and
 * payload bytes handed to the worker minus those it finished with. The worker's progress arrives two ways — in acks,
 * and (where shared memory exists) as live counters it bumps after each batch — and the larger figure wins. Reading
 * shared memory costs more than a field, so the cheap figures (last ack or read) answer first and the live ones only
 * near a limit. Also measures the worker's write rate, which sizes the queue in time (`depth`).
 */
export class InflightGauge {
  private pushedFrames = 0;
  private pushedBytes = 0;
  private doneFrames = 0;
  private doneBytes = 0;
  /** The worker's progress as last read from shared memory (it only grows): saves a read per push. */
  private liveFrames = 0;
  private liveBytes = 0;
  /** Frames per ms the worker writes while busy (smoothed over its acks); 0 until measured. */
  private ratePerMs = 0;
  /** `depth()`, recomputed when the rate changes: it is read on every push near the mark. */
  private frameLimit: number;

  constructor(
    /** The worker's live counters; undefined where no SharedArrayBuffer exists (acks only). */
    readonly progress: SharedProgress | undefined,
    readonly maxFrames: number,
    readonly maxBytes: number,
    private readonly maxQueueTimeMs: number,
  ) {
    this.frameLimit = maxFrames;
  }

  /** In flight now (reads the live counters). */
  queuedFrames(): number {
    if (this.progress) this.liveFrames = this.progress.frames();
    return this.pushedFrames - Math.max(this.doneFrames, this.liveFrames);
  }

  queuedBytes(): number {
    if (this.progress) this.liveBytes = this.progress.bytes();
    return this.pushedBytes - Math.max(this.doneBytes, this.liveBytes);
  }

  /** In flight by the cheap figures (no shared-memory read): an upper bound of `queuedFrames()`. */
  lastFrames(): number {
    return this.pushedFrames - Math.max(this.doneFrames, this.liveFrames);
  }

  lastBytes(): number {
    return this.pushedBytes - Math.max(this.doneBytes, this.liveBytes);
  }

  /**
   * Whether a frame of `size` might cross the shared limits by the cheap figures: then ask the live ones. Against
   * `depth()`, not `maxTaskDepth`: a queue sized in time runs far beyond `maxTaskDepth` frames of 64 B, and every
   * push there would read the shared counters (a BigInt each) and run the full admission for nothing.
   */
  nearLimit(size: number): boolean {
    return this.lastFrames() >= this.frameLimit || this.lastBytes() + size > this.maxBytes;
  }

  /**
   * The frame limit: `maxTaskDepth`, or as many frames as the worker writes in `maxQueueTimeMs` at its measured rate
   * when that is more. A queue sized only in frames is short for small frames (20,000 frames of 64 B are ~11 ms of
   * a 1.8M frames/s writer, less than one chunk write plus an fsync); sized in time, the writer's own stalls (chunk
   * flush, fsync, GC) are absorbed while `maxMemorySize` still bounds the bytes.
   */
  depth(): number {
    return this.frameLimit;
  }

  pushed(size: number): void {
    this.pushedFrames++;
    this.pushedBytes += size;
  }

  /** The worker acknowledged `count` frames (`bytes` payload) as finished with. */
  done(count: number, bytes: number): void {
    this.doneFrames += count;
    this.doneBytes += bytes;
  }

  /** A batch that never reached the worker: finished with here, and in the shared counters the worker bumps. */
  discarded(count: number, bytes: number): void {
    this.done(count, bytes);
    this.progress?.add(count, bytes);
  }

  /** An ack's `count` frames took the worker `busyMs`: the rate `depth()` uses, smoothed. */
  measure(count: number, busyMs: number): void {
    if (!(busyMs > 1 && count > 0)) return;
    const rate = count / busyMs;
    this.ratePerMs = this.ratePerMs === 0 ? rate : this.ratePerMs * 0.8 + rate * 0.2;
    this.frameLimit = Math.max(this.maxFrames, Math.floor(this.ratePerMs * this.maxQueueTimeMs));
  }

  /** The worker is gone: everything pushed counts as finished; returns the frames not acknowledged before. */
  abandon(): number {
    const lost = this.pushedFrames - this.doneFrames;
    this.doneFrames = this.pushedFrames;
    this.doneBytes = this.pushedBytes;
    return lost;
  }
}
