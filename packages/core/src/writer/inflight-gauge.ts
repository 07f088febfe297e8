import type { SharedProgress } from '../writer-worker/progress.js';

/**
 * How much of an async writer's queue is in flight across both threads, which is what its limits bound: frames and
 * payload bytes handed to the worker minus those it finished with. The worker's progress arrives two ways — in acks,
 * and (where shared memory exists) as live counters it bumps after each batch — and the larger figure wins. Reading
 * shared memory costs more than a field, so the cheap figures (last ack or read) answer first and the live ones only
 * near a limit. Also measures the worker's write rate, which sizes the queue in time (`depth`).
 *
 * It counts batches, not frames: the batch being built is the engine's (`BatchBuilder.count`, `.bytes`), which adds
 * it where the two are compared with the limits. A push then updates nothing here and asks nothing of it: it compares
 * its batch with the room the cheap figures leave (`roomFrames`, `roomBytes`, `markFrames`, `markBytes`), fields
 * kept up to date whenever those figures change (a batch handed over, an ack, a read of the live counters).
 */
export class InflightGauge {
  private pushedFrames = 0;
  private pushedBytes = 0;
  private doneFrames = 0;
  private doneBytes = 0;
  /** The worker's progress as last read from shared memory (it only grows): saves a read per push. */
  private liveFrames = 0;
  private liveBytes = 0;
  /**
   * Frames per ms the worker writes while busy, smoothed over its acks; before the first measurement, the last
   * recording's rate or the assumed one (`measured` says which).
   */
  private ratePerMs = 0;
  private measured: boolean;
  /** Acks too short to time on their own, summed until they make a measurement (see `measure`). */
  private unmeasuredFrames = 0;
  private unmeasuredMs = 0;
  /**
   * The frame limit: `maxTaskDepth`, or as many frames as the worker writes in `maxQueueTimeMs` at its measured rate
   * when that is more. A queue sized only in frames is short for small frames (20,000 frames of 64 B are ~11 ms of
   * a 1.8M frames/s writer, less than one chunk write plus an fsync); sized in time, the writer's own stalls (chunk
   * flush, fsync, GC) are absorbed while `maxMemorySize` still bounds the bytes. Recomputed when the rate changes.
   */
  depth: number;
  /**
   * Frames and bytes a batch may still take before the cheap figures reach the limits (`depth`, `maxBytes`): below
   * them no push needs the live figures or the full admission. Against `depth`, not `maxTaskDepth`: a queue sized in
   * time runs far beyond `maxTaskDepth` frames of 64 B, and every push there would read the shared counters (a BigInt
   * each) and run the full admission for nothing.
   */
  roomFrames = 0;
  roomBytes = 0;
  /**
   * `write()`'s high-water mark in frames: half of `depth`, but no more than the worker writes in `WRITE_MARK_MS`
   * (and never below half of `maxFrames`). See `WRITE_MARK_MS`.
   */
  markDepth: number;
  /** Like `roomFrames`, `roomBytes`, before the mark (`markDepth` frames, half of `maxBytes`). */
  markFrames = 0;
  markBytes = 0;

  constructor(
    /** The worker's live counters; undefined where no SharedArrayBuffer exists (acks only). */
    readonly progress: SharedProgress | undefined,
    readonly maxFrames: number,
    readonly maxBytes: number,
    private readonly maxQueueTimeMs: number,
    /**
     * The rate to start from (frames per ms), 0 for none: what the last recording of the same backend in this process
     * measured (`lastRate`). Until its first measurement a new recording would otherwise be sized at `maxTaskDepth`
     * frames only, which a fast producer fills in a few ms (measured: 3,400–5,900 of 300,000 frames of 64 B dropped
     * at 2M frames/s on Deno while the first measurement was 66–119 ms away).
     */
    startRatePerMs = 0,
  ) {
    this.depth = maxFrames;
    this.markDepth = maxFrames / 2;
    this.measured = startRatePerMs > 0;
    this.setRate(this.measured ? startRatePerMs : ASSUMED_RATE_PER_MS);
  }

  /** The write rate measured so far (frames per ms), 0 before the first measurement. */
  get measuredRatePerMs(): number {
    return this.measured ? this.ratePerMs : 0;
  }

  /** In flight now, in the batches handed over (reads the live counters). */
  queuedFrames(): number {
    if (this.progress) {
      this.liveFrames = this.progress.frames();
      this.updateRoom();
    }
    return this.pushedFrames - Math.max(this.doneFrames, this.liveFrames);
  }

  queuedBytes(): number {
    if (this.progress) {
      this.liveBytes = this.progress.bytes();
      this.updateRoom();
    }
    return this.pushedBytes - Math.max(this.doneBytes, this.liveBytes);
  }

  /** In flight by the cheap figures (no shared-memory read): an upper bound of `queuedFrames()`. */
  lastFrames(): number {
    return this.pushedFrames - Math.max(this.doneFrames, this.liveFrames);
  }

  lastBytes(): number {
    return this.pushedBytes - Math.max(this.doneBytes, this.liveBytes);
  }

  /** A batch of `count` frames (`bytes` payload) was handed to the worker. */
  pushed(count: number, bytes: number): void {
    this.pushedFrames += count;
    this.pushedBytes += bytes;
    this.updateRoom();
  }

  /** The worker acknowledged `count` frames (`bytes` payload) as finished with. */
  done(count: number, bytes: number): void {
    this.doneFrames += count;
    this.doneBytes += bytes;
    this.updateRoom();
  }

  /** A batch that never reached the worker: finished with here, and in the shared counters the worker bumps. */
  discarded(count: number, bytes: number): void {
    this.done(count, bytes);
    this.progress?.add(count, bytes);
  }

  /**
   * An ack's `count` frames took the worker `busyMs`: the rate `depth()` uses, smoothed. A fast worker acks often, each
   * ack a fraction of a ms, too short to time alone: acks are summed until they hold at least 1 ms of work. (Dropping
   * the short ones instead left a fast writer unmeasured, its queue at `maxTaskDepth` frames, for whole recordings.)
   */
  measure(count: number, busyMs: number): void {
    if (!(count > 0 && busyMs >= 0)) return;
    this.unmeasuredFrames += count;
    this.unmeasuredMs += busyMs;
    if (this.unmeasuredMs <= 1) return;
    const rate = this.unmeasuredFrames / this.unmeasuredMs;
    this.unmeasuredFrames = 0;
    this.unmeasuredMs = 0;
    // Smoothed from the assumed rate too: a cold worker's first ms (JIT, first chunk) is its slowest, and taking it
    // alone shrank the queue just as it filled (1,917 of 300,000 frames dropped at 1.8M pushes/s on a loaded machine).
    this.setRate(this.ratePerMs * 0.8 + rate * 0.2);
    this.measured = true;
  }

  private setRate(ratePerMs: number): void {
    this.ratePerMs = ratePerMs;
    this.depth = Math.max(this.maxFrames, Math.floor(ratePerMs * this.maxQueueTimeMs));
    this.markDepth = Math.min(this.depth / 2, Math.max(this.maxFrames / 2, Math.floor(ratePerMs * WRITE_MARK_MS)));
    this.updateRoom();
  }

  private updateRoom(): void {
    const frames = this.lastFrames();
    const bytes = this.lastBytes();
    this.roomFrames = this.depth - frames;
    this.roomBytes = this.maxBytes - bytes;
    this.markFrames = this.markDepth - frames;
    this.markBytes = this.maxBytes / 2 - bytes;
  }

  /** The worker is gone: everything pushed counts as finished; returns the frames not acknowledged before. */
  abandon(): number {
    const lost = this.pushedFrames - this.doneFrames;
    this.doneFrames = this.pushedFrames;
    this.doneBytes = this.pushedBytes;
    this.updateRoom();
    return lost;
  }
}

/**
 * How far ahead of the worker an `await write()` producer runs before it waits: 25 ms of the worker's measured rate.
 * The queue's limits are sized for `push()` (`maxQueueTimeMs`, 250 ms by default), so that a producer that cannot
 * wait loses nothing to the writer's stalls; a producer that waits needs only enough in flight to keep the worker
 * busy through one (a chunk flush, a GC) until its next ack. Half of 250 ms ran 900,000 frames of 64 B ahead, about
 * 120 MB in shared slabs the pool could not keep, so nearly every batch took fresh pages, read back by the worker from
 * memory rather than cache: `await write()` at 0.76 of `syncMode` (hand-measured: an `awaitWrite` loop as in
 * bench/integrity.bench.mjs, Node, 2 cores, 14 interleaved repetitions), 0.82 with a mark of 10, 25 or 50 ms (both
 * threads' CPU 300 → 280 ms per million frames; 3 ms: 0.79).
 */
const WRITE_MARK_MS = 25;

/**
 * The rate the queue of a process's first recording of a backend is sized for until it measures its own (frames per
 * ms): a fast writer's (64 B `.vcap` frames: 1.8M–5M frames/s measured on Node, Bun and Deno). Sized at `maxTaskDepth`
 * instead, 20,000 frames are 11 ms at 1.8M pushes/s: a first recording on a loaded machine dropped 565–2,087 of
 * 300,000 frames pushed at 1M–1.8M frames/s, a rate the writer sustains. Too high a guess costs only memory, which
 * `maxMemorySize` bounds, and only until the first measurement (within the worker's first ms of work).
 */
const ASSUMED_RATE_PER_MS = 2000;

/** The last write rate measured per backend in this process: where the next recording's queue starts. */
const lastRates = new Map<string, number>();

/** The rate (frames per ms) the last recording of `backend` measured; 0 when none did. */
export function lastRate(backend: string): number {
  return lastRates.get(backend) ?? 0;
}

/** Keeps a recording's measured rate for the next recording of the same backend. */
export function rememberRate(backend: string, ratePerMs: number): void {
  if (ratePerMs > 0) lastRates.set(backend, ratePerMs);
}
