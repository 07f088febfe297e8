import { BagError } from '../errors.js';
import type { InflightGauge } from './inflight-gauge.js';
import { PostedBatches } from './posted-batches.js';
import type { DropReason } from './writer-stats.js';

/**
 * Limits of one source (`BagWriterOptions.sources`). A source is a group of urls that shares one queue budget; every
 * url not named by a source is a source of its own.
 */
export interface SourceLimits {
  /**
   * The urls of this source: exact urls, or prefixes ending in `*` (`'/camera/*'`). Omitted: the source's name is
   * its one url. An exact url wins over a prefix, a longer prefix over a shorter one.
   */
  urls?: readonly string[];
  /** Frames of this source queued (accepted, not yet written) before its next frame is refused (`queueDepth`). */
  maxFrames?: number;
  /** Payload bytes of this source queued before its next frame is refused (`queueMemory`). */
  maxBytes?: number;
}

/** One source's share of the queue. Counts are updated by the engines; limits are `Infinity` when not set. */
export class SourceQueue {
  /** Frames and payload bytes accepted and not yet finished with by the storage side. */
  frames = 0;
  bytes = 0;
  /** What this source added to the batch being built (worker mode). */
  batchFrames = 0;
  batchBytes = 0;

  constructor(
    readonly name: string,
    readonly maxFrames: number,
    readonly maxBytes: number,
  ) {}
}

/** The queue all sources share, as an engine sees it: what it holds and its limits (`maxTaskDepth`, `maxMemorySize`). */
export interface SharedQueue {
  frames: number;
  bytes: number;
  depth: number;
  maxBytes: number;
  /** `write()`'s high-water mark in frames: half of `depth`, or less where the engine sizes it in time. */
  markDepth: number;
}

/** Why a frame was refused: the cause counted, and the message of its `QUEUE_FULL` error. */
export interface Refusal {
  reason: DropReason;
  message: string;
}

/**
 * The writer's per-source bounded queues (docs guide "The writer's queues"; file order: format reference §2.6, §2.10, §7.3).
 *
 * All sources share the writer's queue limits (`maxTaskDepth`, `maxMemorySize`) and each may have limits of its own.
 * Admission is where fairness lives: while the shared queue is below its limits any source may use it; once it is
 * full, a source is still admitted while it holds less than its fair share (the limits divided by the sources that
 * have frames queued), so a firehose that filled the queue is refused while a slow source is not. The one writer
 * then takes frames in the order they were accepted: file order is what `.vcap` readers and VLink's `.vdb` readers
 * replay by, so reordering by source would replay a camera's old frames after newer state frames.
 *
 * The shared limits may therefore be exceeded by the fair shares of the sources below theirs: never beyond twice the
 * limits (a hard cap), and only until the writer drains the firehose's frames (it is refused meanwhile).
 */
export class SourceQueues {
  /** Sources with frames queued: the divisor of the fair share. */
  private active = 0;
  private readonly byUrl = new Map<string, SourceQueue>();
  private readonly named = new Map<string, SourceQueue>();
  /** `[prefix, source]`, longest prefix first. */
  private readonly prefixes: Array<[string, SourceQueue]> = [];
  /** Sources in the batch being built, and per batch posted `[seq, source, frames, bytes, …]`, oldest first. */
  private touched: SourceQueue[] = [];
  private readonly posted = new PostedBatches<Array<number | SourceQueue>>();
  private readonly releasePosted = (record: Array<number | SourceQueue>): void => {
    for (let i = 1; i < record.length; i += 3)
      this.release(record[i] as SourceQueue, record[i + 1] as number, record[i + 2] as number);
  };

  constructor(sources: Readonly<Record<string, SourceLimits>> = {}) {
    if (typeof sources !== 'object' || sources === null)
      throw new BagError('INVALID_ARGUMENT', 'sources must be an object of source name → limits');
    const owner = new Map<string, string>();
    for (const [name, spec] of Object.entries(sources)) {
      if (name.length === 0) throw new BagError('INVALID_ARGUMENT', 'sources: a source name must not be empty');
      const source = new SourceQueue(
        name,
        limit(name, 'maxFrames', spec?.maxFrames),
        limit(name, 'maxBytes', spec?.maxBytes),
      );
      const urls = spec?.urls ?? [name];
      if (!Array.isArray(urls) || urls.length === 0)
        throw new BagError('INVALID_ARGUMENT', `sources.${name}.urls must be a non-empty array of urls`);
      for (const url of urls) {
        if (typeof url !== 'string' || url.length === 0 || url === '*')
          throw new BagError('INVALID_ARGUMENT', `sources.${name}.urls: "${String(url)}" is not a url or url prefix`);
        const other = owner.get(url);
        if (other !== undefined)
          throw new BagError('INVALID_ARGUMENT', `sources: "${url}" is listed by both "${other}" and "${name}"`);
        owner.set(url, name);
        if (url.endsWith('*')) this.prefixes.push([url.slice(0, -1), source]);
        else this.named.set(url, source);
      }
    }
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
  }

  /** The source a url belongs to (a named one, else one of its own with no limits but the shared ones). */
  of(url: string): SourceQueue {
    let source = this.byUrl.get(url);
    if (source === undefined) {
      source = this.named.get(url) ?? this.prefixes.find(([prefix]) => url.startsWith(prefix))?.[1];
      source ??= new SourceQueue(url, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
      this.byUrl.set(url, source);
    }
    return source;
  }

  /** Whether a frame of `size` bytes of `source` may be queued: undefined when it may, else why not. */
  admit(source: SourceQueue, size: number, shared: SharedQueue): Refusal | undefined {
    if (source.frames >= source.maxFrames)
      return {
        reason: 'queueDepth',
        message: `source "${source.name}" queue depth limit (${source.maxFrames} frames)`,
      };
    if (source.bytes + size > source.maxBytes)
      return {
        reason: 'queueMemory',
        message: `source "${source.name}" queue memory limit (${source.maxBytes} bytes)`,
      };
    const { frames: queuedFrames, bytes: queuedBytes, depth, maxBytes } = shared;
    const fullFrames = queuedFrames >= depth;
    if (!fullFrames && queuedBytes + size <= maxBytes) return undefined;
    // Beyond the shared limits only by fair shares, and never beyond twice the limits (many sources at their share).
    const underCap = queuedFrames < 2 * depth && queuedBytes + size <= 2 * maxBytes;
    if (underCap && this.withinShare(source, size, depth, maxBytes)) return undefined;
    return fullFrames
      ? { reason: 'queueDepth', message: 'queue depth limit' }
      : { reason: 'queueMemory', message: 'queue memory limit' };
  }

  /**
   * `write()`'s high-water mark for a source: below half its own limits, and below the shared mark (`markDepth`
   * frames, half of `maxBytes`) or its fair share of it.
   */
  hasRoom(url: string, size: number, shared: SharedQueue): boolean {
    return this.hasRoomIn(this.of(url), size, shared);
  }

  /** `hasRoom` for a source already looked up. */
  hasRoomIn(source: SourceQueue, size: number, shared: SharedQueue): boolean {
    if (source.frames >= source.maxFrames / 2 || (source.bytes > 0 && source.bytes + size > source.maxBytes / 2))
      return false;
    const { frames: queuedFrames, bytes: queuedBytes, markDepth, maxBytes } = shared;
    if (queuedFrames < markDepth && (queuedBytes === 0 || queuedBytes + size <= maxBytes / 2)) return true;
    return this.withinShare(source, size, markDepth, maxBytes / 2);
  }

  /** A frame of `source` was accepted. `batched`: it travels in the batch being built (worker mode). */
  add(source: SourceQueue, size: number, batched: boolean): void {
    if (source.frames++ === 0) this.active++;
    source.bytes += size;
    if (!batched) return;
    if (source.batchFrames++ === 0) this.touched.push(source);
    source.batchBytes += size;
  }

  /** `frames` frames (`bytes` bytes) of `source` are finished with: written or dropped by the storage side. */
  release(source: SourceQueue, frames: number, bytes: number): void {
    source.frames -= frames;
    source.bytes -= bytes;
    if (frames > 0 && source.frames === 0) this.active--;
  }

  /** The batch being built was posted as `seq`: its frames are released when the worker is done with it. */
  seal(seq: number): void {
    if (this.touched.length === 0) return;
    const record: Array<number | SourceQueue> = [seq];
    for (const source of this.touched) {
      record.push(source, source.batchFrames, source.batchBytes);
      source.batchFrames = 0;
      source.batchBytes = 0;
    }
    this.touched = [];
    this.posted.add(record);
  }

  /** The worker is done with every batch up to `seq` (or, with `Infinity`, everything posted is lost). */
  doneUpTo(seq: number): void {
    this.posted.takeUpTo(seq, this.releasePosted);
  }

  /** The last batch sealed (`seq`) never reached the worker: its frames are finished with. */
  discard(seq: number): void {
    const last = this.posted.takeLast(seq);
    if (last) this.releasePosted(last);
  }

  private withinShare(source: SourceQueue, size: number, depth: number, maxBytes: number): boolean {
    const sharing = this.active + (source.frames === 0 ? 1 : 0);
    return sharing > 1 && source.frames < depth / sharing && source.bytes + size <= maxBytes / sharing;
  }
}

function limit(name: string, field: string, value: number | undefined): number {
  if (value === undefined) return Number.POSITIVE_INFINITY;
  if (typeof value !== 'number' || !(value > 0) || !Number.isSafeInteger(value))
    throw new BagError('INVALID_ARGUMENT', `sources.${name}.${field} must be a positive integer, got ${String(value)}`);
  return value;
}

/** The error of a frame refused because its queue is full (`stats().lastError`, a `write()`/`pushDurable` rejection). */
export function queueFullError(refusal: Refusal, url: string): BagError {
  return new BagError('QUEUE_FULL', `${refusal.message} reached; frame dropped`, { url });
}

// --- a worker writer's view of its queue ----------------------------------------------------------------------

/** The batch being built, as far as the queue limits see it. */
export interface BuildingBatch {
  readonly count: number;
  readonly bytes: number;
}

/**
 * Where a worker writer's queue stands against its limits, seen from the producer: the batches in flight (the
 * gauge), the batch being built, and each source's share. Cheap figures first (the last ack or read, fields only);
 * the live ones, which read shared memory, only near a limit. `write()`'s high-water mark is the gauge's
 * (`InflightGauge.markDepth`, half of `maxBytes`).
 */
export class WorkerQueueRoom {
  private readonly sharedQueue: SharedQueue = { frames: 0, bytes: 0, depth: 0, maxBytes: 0, markDepth: 0 };

  constructor(
    private readonly batch: BuildingBatch,
    private readonly gauge: InflightGauge,
    private readonly sources: SourceQueues,
  ) {}

  /** In flight: the batches handed over (see inflight-gauge.ts) and the one being built. */
  queuedFrames(): number {
    return this.gauge.queuedFrames() + this.batch.count;
  }

  queuedBytes(): number {
    return this.gauge.queuedBytes() + this.batch.bytes;
  }

  /**
   * Below the mark by the cheap figures alone, the source below half its own limits too: what both `hasRoomIn` and
   * `withinLimits` would answer for it, asked once (a frame bigger than half the source's bytes takes the full
   * path, which may refuse it). Every `write()` of a steady producer is answered here.
   */
  belowMarkNow(source: SourceQueue, size: number): boolean {
    const { batch, gauge } = this;
    return (
      batch.count < gauge.markFrames &&
      batch.bytes + size <= gauge.markBytes &&
      source.frames < source.maxFrames / 2 &&
      source.bytes + size <= source.maxBytes / 2
    );
  }

  /** Whether the whole queue is below its high-water mark for a frame of `size`. */
  hasRoom(size: number): boolean {
    const { batch, gauge } = this;
    if (batch.count < gauge.markFrames && batch.bytes + size <= gauge.markBytes) return true;
    return this.queuedFrames() < gauge.markDepth && this.queuedBytes() + size <= gauge.maxBytes / 2;
  }

  /** Whether `source` is below its high-water mark for a frame of `size` (see `SourceQueues.hasRoomIn`). */
  hasRoomIn(source: SourceQueue, size: number): boolean {
    const { batch, gauge } = this;
    const below = batch.count < gauge.markFrames && batch.bytes + size <= gauge.markBytes;
    return this.sources.hasRoomIn(
      source,
      size,
      below ? this.shared(0, 0) : this.shared(this.queuedFrames(), this.queuedBytes()),
    );
  }

  /** True when the cheap figures leave room for the frame below every limit (no admission needed). */
  withinLimits(source: SourceQueue, size: number): boolean {
    const { batch, gauge } = this;
    return (
      source.frames < source.maxFrames &&
      source.bytes + size <= source.maxBytes &&
      batch.count < gauge.roomFrames &&
      batch.bytes + size <= gauge.roomBytes
    );
  }

  /** The shared queue now (live figures), with the gauge's limits: what `SourceQueues.admit` weighs a source against. */
  live(): SharedQueue {
    return this.shared(this.queuedFrames(), this.queuedBytes());
  }

  /** The shared queue holding `frames`, `bytes`: one object refilled (asked per `write()`). */
  private shared(frames: number, bytes: number): SharedQueue {
    const shared = this.sharedQueue;
    shared.frames = frames;
    shared.bytes = bytes;
    shared.depth = this.gauge.depth;
    shared.maxBytes = this.gauge.maxBytes;
    shared.markDepth = this.gauge.markDepth;
    return shared;
  }
}
