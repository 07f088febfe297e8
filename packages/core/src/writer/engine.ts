import type { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { CounterTable } from './drop-counters.js';
import type { DropReason } from './writer-stats.js';

/** Where a writer's frames are stored: on the caller's stack, in a same-thread queue, or in a worker. */
export type WriterMode = 'sync' | 'queue' | 'worker';

export interface Durable {
  resolve(timestamp: number): void;
  reject(error: unknown): void;
}

/**
 * The frames and payload bytes an engine stored, which it adds to in place: a same-thread engine stores frame by frame,
 * and a call per frame into the host cost more than the counting (Bun, 200k `syncMode` pushes of 64 B to `.vcap`: ~1 ms
 * of ~32, hand-measured).
 */
export interface WrittenTally {
  frames: number;
  bytes: number;
}

/**
 * What an engine reports back to its `BagWriter`. The writer owns the counters, callbacks and the quit promise, so
 * the three engines only move frames and say what happened to them.
 */
export interface EngineHost {
  /** What the engine stored so far: it adds each stored frame (or each acknowledged batch) here. */
  readonly written: WrittenTally;
  committed(): void;
  /**
   * `count` frames of `url` (undefined: not known) did not reach the file; `report` asks for the error callbacks too.
   * `storageSide`: counted where the file is written (the worker), which stores it with its own counts at close.
   */
  dropped(
    reason: DropReason,
    error: BagError,
    report: boolean,
    count?: number,
    url?: string,
    storageSide?: boolean,
  ): void;
  /** Every drop so far, per url and cause: what a same-thread engine stores at close. */
  counters(): CounterTable;
  /** The drops counted on the producer's side only (what the worker did not see): sent with `quit`. */
  producerCounters(): CounterTable;
  /** Frames left the queue: waiting `write()`s and `ready()`s may go on if their source is below its mark. */
  room(): void;
  /** A storage error: the writer has failed (reported once, then recorded in stats). */
  failed(error: BagError): void;
  /** A non-fatal error worth a callback (a rejected schema). */
  warn(error: BagError): void;
  split(index: number, file: string, before: boolean): void;
  /** The file is closed (or the engine is gone); resolves `waitForQuit()`. */
  finished(): void;
}

export interface WriteEngine {
  readonly mode: WriterMode;
  /** Frames / payload bytes accepted but not yet finished with by the storage side. */
  queuedFrames(): number;
  queuedBytes(): number;
  /** Starts background work (no-op for sync); the first submit starts it too. */
  start(): void;
  /**
   * Takes a validated, timestamped, remapped frame; false when it was refused (already reported to the host). `lazy`
   * (from `write()`): the producer awaits between frames, so hand batches over when the event loop is free, not
   * after each frame's microtask.
   */
  submit(frame: Frame, durable?: Durable, lazy?: boolean): boolean;
  /**
   * Whether a frame of `size` bytes may be queued without waiting: below half the queue's limits (its high-water
   * mark), so `write()` never meets a full queue. With `url`: below the high-water mark of that url's source (its own
   * limits, and the shared ones or its fair share of them; see source-queues.ts). The engine calls `host.room()`
   * whenever frames left the queue.
   */
  hasRoom(size: number, url?: string): boolean;
  /**
   * `write()`'s step in one: queues the frame when its source is below its high-water mark (true), refuses it as
   * `submit` does (false, reported), or leaves it (undefined) to wait. The decision of `hasRoom(size, url)` then
   * `submit(frame, undefined, true)`, with one lookup of the url instead of two.
   */
  submitBelowMark?(frame: Frame): boolean | undefined;
  writeSchema(schema: SchemaData): void;
  setUrlLoss(url: string, loss: number): void;
  currentFile(): string;
  /**
   * The host's counters by cause changed (a drop, or `BagWriter.count`): the engine hands the table to the storage
   * side within about a second, so the backend stores it at its next metadata refresh (a crash keeps the last one).
   */
  countersChanged(): void;
  /** Writes what is queued, closes the file, then calls `host.finished()`. */
  quit(): void;
}
