import type { BackendReader, CursorQuery } from '../backend/backend.js';
import type { Frame } from '../model/frame.js';
import type { ProgressCallback } from '../maintenance/check-report.js';

/**
 * The segment a time window starts in (format reference §7.3): the first segment whose end (ms) is ≥ the begin time while the
 * previous segment's end is ≤ it. Begin times are compared in whole ms as VLink's integer `begin_time`. Returns
 * `endsMs.length` when no segment qualifies (nothing to read).
 */
export function startSegment(endsMs: readonly number[], beginUs: number | undefined): number {
  if (beginUs === undefined || !(beginUs > 0)) return 0;
  const begin = Math.floor(beginUs / 1000);
  let previousEnd = 0;
  for (let i = 0; i < endsMs.length; i++) {
    const end = endsMs[i]!;
    if (begin >= previousEnd && begin <= end) return i;
    previousEnd = end;
  }
  return endsMs.length;
}

/** A segment to read and the µs added to its timestamps to put them on the recording's time base. */
export interface SequencedSegment {
  reader: BackendReader;
  offsetUs: number;
}

/** The segments a chain reads: opened when reached (`acquire`), given back when read (`release`). */
export interface ChainSegments {
  readonly length: number;
  /** µs added to the segment's timestamps to put them on the recording's time base. */
  offsetUs(index: number): number;
  /** True when the segment cannot hold a frame of the query: the chain passes it without opening it. */
  skips?(index: number, query: CursorQuery): boolean;
  acquire(index: number): BackendReader;
  release?(index: number): void;
}

/** Segments that are all open already. */
export function openSegments(sequence: readonly SequencedSegment[]): ChainSegments {
  return {
    length: sequence.length,
    offsetUs: (index) => sequence[index]!.offsetUs,
    acquire: (index) => sequence[index]!.reader,
  };
}

/**
 * Frames of several segments in order, from `start` on, every segment with the same bounds (format reference §7.5). A plain
 * iterator (no generator per segment) that ends the open segment cursor when it is returned early.
 */
export class SegmentChain implements IterableIterator<Frame> {
  private inner: Iterator<Frame> | undefined;
  /** The segment `inner` reads (acquired from `segments`), −1 when none. */
  private held = -1;
  private position: number;
  private offset = 0;
  /** The segment of the last frame handed out (-1 before the first), told to `onSegment` when it changes. */
  private reported = -1;

  constructor(
    private readonly segments: ChainSegments,
    start: number,
    private readonly query: CursorQuery,
    private readonly onSegment?: (index: number) => void,
  ) {
    this.position = start;
  }

  [Symbol.iterator](): IterableIterator<Frame> {
    return this;
  }

  next(): IteratorResult<Frame> {
    for (;;) {
      if (this.inner === undefined) {
        const index = this.position;
        if (index >= this.segments.length) return { done: true, value: undefined };
        this.position++;
        if (this.segments.skips?.(index, this.query) === true) continue;
        const reader = this.segments.acquire(index);
        this.held = index;
        this.offset = this.segments.offsetUs(index);
        try {
          this.inner = reader.frames(this.offset === 0 ? this.query : shift(this.query, -this.offset));
        } catch (error) {
          this.releaseHeld();
          throw error;
        }
      }
      let step: IteratorResult<Frame>;
      try {
        step = this.inner.next();
      } catch (error) {
        this.inner = undefined;
        this.releaseHeld();
        throw error;
      }
      if (step.done !== true) {
        if (this.offset !== 0) step.value.timestamp += this.offset;
        if (this.reported !== this.position - 1) this.onSegment?.((this.reported = this.position - 1));
        return step;
      }
      this.inner = undefined;
      this.releaseHeld();
    }
  }

  return(): IteratorResult<Frame> {
    const inner = this.inner;
    this.inner = undefined;
    this.position = this.segments.length;
    try {
      inner?.return?.();
    } finally {
      this.releaseHeld();
    }
    return { done: true, value: undefined };
  }

  private releaseHeld(): void {
    const held = this.held;
    this.held = -1;
    if (held >= 0) this.segments.release?.(held);
  }
}

function shift(query: CursorQuery, byUs: number): CursorQuery {
  const out: CursorQuery = { ...query };
  if (query.beginUs !== undefined) out.beginUs = query.beginUs + byUs;
  if (query.endUs !== undefined) out.endUs = query.endUs + byUs;
  return out;
}

/** A segment's own progress as a fraction of its place in the recording (`segments`, `done` fractional). */
export function progressWithin(progress: ProgressCallback, index: number, total: number): ProgressCallback {
  return (p) => progress({ done: index + (p.total > 0 ? Math.min(1, p.done / p.total) : 1), total, unit: 'segments' });
}
