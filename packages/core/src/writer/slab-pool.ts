import { unrefTimer } from '../util/schedule.js';
import { PostedBatches } from './posted-batches.js';

/**
 * The memory batches travel in. Where `SharedArrayBuffer` exists (Node, Bun, Deno; browsers only when
 * cross-origin isolated) payload bytes live in shared slabs: each slab is announced to the worker once, batches then
 * name it by id, and the worker's ack releases it for reuse. Nothing is transferred per batch, which matters more
 * than it looks: V8 counts every transferred-in ArrayBuffer as a new external allocation until the next GC, so
 * bouncing megabyte buffers between threads makes both isolates collect every few dozen frames (measured: 4–8 ms
 * pauses inside `push()` at 1 MiB frames). Without shared memory, slabs are plain ArrayBuffers that are transferred
 * and not reused.
 *
 * Slabs are pooled by capacity (`capacityFor` rounds to eighths of a power of two: ≤ 12.5 % slack); idle slabs
 * beyond `maxIdleBytes` are dropped on both sides. A recording that ends cleanly leaves its slabs to the next one
 * (`retire`, `SpareSlabs`).
 */
export interface Slab {
  /** ≥ 0: a shared slab known to the worker by this id; −1: a plain buffer that travels by transfer. */
  readonly id: number;
  readonly buffer: ArrayBufferLike;
}

export class SlabPool {
  readonly shared = typeof SharedArrayBuffer === 'function';
  private readonly free = new Map<number, Slab[]>();
  private readonly byId = new Map<number, Slab>();
  private idleBytes = 0;
  private nextId = 0;
  private announce: Array<[number, SharedArrayBuffer]> = [];
  /** Batches posted whose shared slabs the worker still uses, oldest first: `[seq, slab ids…]` each. */
  private readonly lent = new PostedBatches<number[]>();
  private readonly returnLent = (ids: number[]): void => {
    for (let i = 1; i < ids.length; i++) this.release(ids[i]!);
  };
  private forget: number[] = [];

  /**
   * `reclaim` is asked to release the slabs the worker is done with before a new one is allocated: the producer learns
   * that from shared memory long before the ack arrives (a producer that never yields gets no ack at all).
   */
  constructor(
    private readonly maxIdleBytes: number,
    private readonly reclaim: () => void = () => {},
    /** Where the slabs go when the recording ends, and where new ones come from first (none: nothing is kept). */
    private readonly spare?: SpareSlabs,
  ) {}

  /** A slab of exactly `capacity` bytes (a value from `capacityFor`): an idle one when there is one. */
  take(capacity: number): Slab {
    if (!this.shared) return { id: -1, buffer: new ArrayBuffer(capacity) };
    let slab = this.free.get(capacity)?.pop();
    if (!slab) {
      this.reclaim();
      slab = this.free.get(capacity)?.pop();
    }
    if (slab) {
      this.idleBytes -= capacity;
      return slab;
    }
    const created: Slab = { id: this.nextId++, buffer: this.spare?.take(capacity) ?? new SharedArrayBuffer(capacity) };
    this.byId.set(created.id, created);
    this.announce.push([created.id, created.buffer as SharedArrayBuffer]);
    return created;
  }

  /** The worker is done with a slab: keep it for reuse, or forget it when enough are idle already. */
  release(id: number): void {
    const slab = this.byId.get(id);
    if (!slab) return;
    const size = slab.buffer.byteLength;
    if (this.idleBytes + size > this.maxIdleBytes) {
      this.byId.delete(id);
      this.forget.push(id);
      return;
    }
    let list = this.free.get(size);
    if (!list) this.free.set(size, (list = []));
    list.push(slab);
    this.idleBytes += size;
  }

  /**
   * The recording is over and the worker let go of every slab (it closed its file): they go to the spare slabs for
   * the next recording of this process. The pool is empty afterwards.
   */
  retire(): void {
    if (this.spare) for (const slab of this.byId.values()) this.spare.keep(slab.buffer as SharedArrayBuffer);
    this.byId.clear();
    this.free.clear();
    this.idleBytes = 0;
  }

  /** A batch was posted: `[seq, slab ids…]` are the worker's until `returnUpTo(seq)`. */
  lend(ids: number[]): void {
    this.lent.add(ids);
  }

  /** The worker is done with every batch up to `seq`: their slabs are released. */
  returnUpTo(seq: number): void {
    this.lent.takeUpTo(seq, this.returnLent);
  }

  /** Slabs created since the last call: the next batch introduces them to the worker. */
  takeAnnouncements(): Array<[number, SharedArrayBuffer]> {
    const out = this.announce;
    this.announce = [];
    return out;
  }

  /** Slabs dropped since the last call: the next batch tells the worker to let go of them too. */
  takeForgotten(): number[] {
    const out = this.forget;
    this.forget = [];
    return out;
  }
}

/**
 * The shared slabs finished recordings left for the next one, by capacity. Fresh shared memory is not free: the
 * kernel maps and zeroes it page by page at first touch, and a recording of small frames fills about 40 MiB of slabs
 * before its first ones come back (`await write()` of 64 B frames, Node: 78 arenas of 256 KiB and their frame tables).
 * Allocating and first touching that took 22 ms, touching it again 9 ms (hand-measured, Node 20, this 2-vCPU VM),
 * on a recording of a million such frames that takes about 150 ms. A process that records one bag after another
 * (a server, a CLI converting files, a trigger recorder's dumps) pays it once. Unused for `keepMs`, they are
 * dropped: an idle process holds no shared memory for long. The process's store is `spareSlabs` in
 * `writer-worker/idle-writers.ts`, beside the idle worker that waits as long.
 */
export class SpareSlabs {
  private readonly byCapacity = new Map<number, SharedArrayBuffer[]>();
  private bytes = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly keepMs: number,
  ) {}

  /** Keeps `buffer` for a later recording, unless `maxBytes` are kept already. */
  keep(buffer: SharedArrayBuffer): void {
    const capacity = buffer.byteLength;
    if (this.bytes + capacity > this.maxBytes) return;
    let list = this.byCapacity.get(capacity);
    if (!list) this.byCapacity.set(capacity, (list = []));
    list.push(buffer);
    this.bytes += capacity;
    this.dropLater();
  }

  /** A kept buffer of exactly `capacity` bytes, if there is one. */
  take(capacity: number): SharedArrayBuffer | undefined {
    if (this.bytes === 0) return undefined;
    const buffer = this.byCapacity.get(capacity)?.pop();
    if (buffer) this.bytes -= capacity;
    return buffer;
  }

  /** Bytes kept now (for tests). */
  get keptBytes(): number {
    return this.bytes;
  }

  /** Lets go of every kept buffer. */
  drop(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.byCapacity.clear();
    this.bytes = 0;
  }

  /** Drops everything `keepMs` after the last recording left slabs here. */
  private dropLater(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.drop(), this.keepMs);
    unrefTimer(this.timer);
  }
}

const MIN_CAPACITY = 4096;

/** Smallest pooled capacity ≥ `length`: 4 KiB, or the next eighth-of-a-power-of-two step above it. */
export function capacityFor(length: number): number {
  if (length <= MIN_CAPACITY) return MIN_CAPACITY;
  const step = 2 ** (Math.floor(Math.log2(length - 1)) - 3);
  return Math.ceil(length / step) * step;
}
