import type { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { DropReason } from './writer-stats.js';

/** Where a writer's frames are stored: on the caller's stack, in a same-thread queue, or in a worker. */
export type WriterMode = 'sync' | 'queue' | 'worker';

export interface Durable {
  resolve(timestamp: number): void;
  reject(error: unknown): void;
}

/**
 * What an engine reports back to its `BagWriter`. The writer owns the counters, callbacks and the quit promise, so
 * the three engines only move frames and say what happened to them.
 */
export interface EngineHost {
  written(frames: number, bytes: number): void;
  committed(): void;
  /** `count` frames did not reach the file; `report` asks for the error callbacks too. */
  dropped(reason: DropReason, error: BagError, report: boolean, count?: number): void;
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
  /** Takes a validated, timestamped, remapped frame; false when it was refused (already reported to the host). */
  submit(frame: Frame, durable?: Durable): boolean;
  writeSchema(schema: SchemaData): void;
  setUrlLoss(url: string, loss: number): void;
  currentFile(): string;
  /** Writes what is queued, closes the file, then calls `host.finished()`. */
  quit(): void;
}
