import { BagError } from '../errors.js';

/**
 * One source of a `TimeMerge` (a chunk of a ROS 1 bag or an MCAP file): the time of its current item as two unsigned
 * 32-bit halves compared in that order (ns since the epoch split high/low, or ROS's sec/nsec).
 */
export interface MergeSource {
  /** Breaks ties between sources: the lower first (their order in the file). */
  readonly rank: number;
  /** Bytes it holds while open (its decompressed chunk), counted against `MergeLimits.maxOpenBytes`. */
  readonly bytes: number;
  hi: number;
  lo: number;
  /** Moves to its next item and sets `hi`/`lo`; false when there is none (then it is closed). */
  step(): boolean;
}

/** What a merge may hold open at once; past either, `LIMIT_REACHED`. */
export interface MergeLimits {
  maxOpen: number;
  maxOpenBytes: number;
}

/**
 * Recorders write chunks that overlap in time one or two deep. Only an index that claims starts its chunks do not
 * have (a damaged or hostile file) makes every chunk overlap, and that must end in an error, not in the memory (or,
 * merging thousands of sources, the CPU) of a server.
 */
export const DEFAULT_MERGE_LIMITS: MergeLimits = { maxOpen: 1024, maxOpenBytes: 512 * 1024 * 1024 };

/** What each open source costs beyond its bytes (its arrays and buffers), so many tiny sources count too. */
const SOURCE_OVERHEAD = 16 * 1024;

/**
 * Items of many time-ordered sources in time order (ties by rank), as rosbag and the MCAP indexed readers read a file
 * whose chunks overlap: source `i` is opened only once the earliest pending item is no earlier than its start (the
 * starts, from the file's index, ascending), so sources that do not overlap are open one at a time. `next()` returns
 * the source whose current item comes next; that source is stepped at the following call, so its item stays valid
 * until then. Open sources sit in a binary heap: a merge of many costs log n per item, not n.
 */
export class TimeMerge<S extends MergeSource> {
  private readonly heap: S[] = [];
  private nextSource = 0;
  /** The start of source `nextSource` (read once: `next()` compares it per item). */
  private pendingHi = 0;
  private pendingLo = 0;
  private current: S | undefined;
  private openBytes = 0;

  /**
   * `count` sources whose starts are `startHi(i)`/`startLo(i)` in ascending order; `open(i)` opens one (undefined:
   * nothing in it), `close` is told when one is done (to reuse its buffers). `file` names the file in errors.
   */
  constructor(
    private readonly count: number,
    private readonly startHi: (i: number) => number,
    private readonly startLo: (i: number) => number,
    private readonly open: (i: number) => S | undefined,
    private readonly close: (source: S) => void = () => {},
    private readonly file?: string,
    private readonly limits: MergeLimits = DEFAULT_MERGE_LIMITS,
  ) {
    this.readStart();
  }

  /** The source whose current item comes next, or undefined when every source is done. */
  next(): S | undefined {
    const last = this.current;
    this.current = undefined;
    if (last !== undefined) {
      if (!last.step()) this.remove();
      else if (this.heap.length > 1) this.siftDown(0);
    }
    while (this.nextSource < this.count && (this.heap.length === 0 || this.startsBy(this.heap[0]!))) this.openNext();
    this.current = this.heap[0];
    return this.current;
  }

  /** Whether the next source starts no later than the current item of `top` (then it must be opened first). */
  private startsBy(top: S): boolean {
    return this.pendingHi < top.hi || (this.pendingHi === top.hi && this.pendingLo <= top.lo);
  }

  private readStart(): void {
    if (this.nextSource >= this.count) return;
    this.pendingHi = this.startHi(this.nextSource);
    this.pendingLo = this.startLo(this.nextSource);
  }

  private openNext(): void {
    const source = this.open(this.nextSource++);
    this.readStart();
    if (source === undefined) return;
    if (!source.step()) {
      this.close(source);
      return;
    }
    const bytes = source.bytes + SOURCE_OVERHEAD;
    if (
      this.heap.length > 0 &&
      (this.heap.length >= this.limits.maxOpen || this.openBytes + bytes > this.limits.maxOpenBytes)
    ) {
      this.close(source);
      throw new BagError(
        'LIMIT_REACHED',
        `${this.heap.length + 1} chunks holding ${this.openBytes + bytes} bytes overlap in time: more than a merge ` +
          'in time order may hold open',
        this.file === undefined ? {} : { file: this.file },
      );
    }
    this.openBytes += bytes;
    this.heap.push(source);
    this.siftUp(this.heap.length - 1);
  }

  /** Takes the top (a source that is done) off the heap. */
  private remove(): void {
    const heap = this.heap;
    const done = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      this.siftDown(0);
    }
    this.openBytes -= done.bytes + SOURCE_OVERHEAD;
    this.close(done);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    const item = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(item, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = item;
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const item = heap[i]!;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(heap[child + 1]!, heap[child]!)) child++;
      if (!before(heap[child]!, item)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = item;
  }
}

function before(a: MergeSource, b: MergeSource): boolean {
  return a.hi < b.hi || (a.hi === b.hi && (a.lo < b.lo || (a.lo === b.lo && a.rank < b.rank)));
}
