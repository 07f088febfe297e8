import { BagError, type BagErrorCode } from '../errors.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import type { SchemaData } from '../model/frame.js';
import type { RecordingContext } from '../backend/backend.js';
import type { DropReason } from '../writer/writer-stats.js';

/**
 * Messages between `BagWriter` (producer thread) and `writer-service.ts` (worker). One ordered channel: the worker
 * handles messages strictly in the order they were posted, which is what keeps frames, schemas and `quit` in order.
 */

/** The serialisable part of a RecordingContext; `resolveSchema` is replaced by schemas sent ahead of frames. */
export type ContextData = Omit<RecordingContext, 'resolveSchema' | 'onSplit'>;

export interface OpenMessage {
  k: 'open';
  path: string;
  config: ResolvedWriterConfig;
  context: ContextData;
  /** `Backend.workerModule` and `Backend.name`: the worker imports the module and picks the backend by name. */
  backendModule: string;
  backendName: string;
  /** Live progress the producer reads without waiting for acks (see `progress.ts`); absent without shared memory. */
  progress?: SharedArrayBuffer;
}

/** Where bytes are: the id of a shared slab the worker already knows, or a buffer transferred with the message. */
export type ChunkRef = number | ArrayBuffer;

/**
 * Frames in struct-of-arrays form: `meta` holds FIELDS float64 numbers per frame, payload bytes live in `chunks`
 * (batch arenas and single large payloads), url and ser names are interned (`strings` announces the new ones in id
 * order). Shared slabs are introduced once (`slabs`) and dropped once (`forget`); see `writer/slab-pool.ts`.
 */
export interface BatchMessage {
  k: 'batch';
  seq: number;
  count: number;
  bytes: number;
  meta: ChunkRef;
  chunks: ChunkRef[];
  slabs: Array<[number, SharedArrayBuffer]>;
  forget: number[];
  strings: string[];
  /** Schemas resolved on the producer for (ser, family) pairs first seen in this batch; cached, not written. */
  schemas: SchemaData[];
  /** Pairs of (frame index, durable id): their outcome is reported in the ack. */
  durable: number[];
  /** Commit after the batch (a durable push is in it). */
  commit: boolean;
}

export interface SchemaMessage {
  k: 'schema';
  schema: SchemaData;
}

export interface LossMessage {
  k: 'loss';
  url: string;
  loss: number;
}

export interface QuitMessage {
  k: 'quit';
  /** Drops the producer counted (queue full, plugin, …), per url and cause: stored with the worker's at close. */
  counters?: Record<string, Record<string, number>>;
}

/** The producer's counters by cause so far (the whole table): the worker stores them with its own at a refresh. */
export interface CountersMessage {
  k: 'counters';
  counters: Record<string, Record<string, number>>;
}

export type ToWorker = OpenMessage | BatchMessage | SchemaMessage | LossMessage | CountersMessage | QuitMessage;

/** What happened to one or more batches (the worker coalesces the acks of batches handled in one turn). */
export interface AckMessage {
  k: 'ack';
  batches: number;
  count: number;
  bytes: number;
  written: number;
  writtenBytes: number;
  dropped: Partial<Record<DropReason, number>>;
  /** The same drops per url: `[url, reason, count]`. */
  droppedUrls: Array<[string, DropReason, number]>;
  /** Time the worker spent writing these batches (ms): the producer's measure of the writer's sustained rate. */
  busyMs: number;
  /** Rejections worth a callback (capped per ack; `dropped` has the exact counts). */
  errors: ErrorData[];
  /** The storage error that just failed the writer (sent once). */
  fatal?: ErrorData;
  /** Durable commits done. */
  commits: number;
  /** Durable ids that made it to disk, and those that did not with the reason. */
  durableOk: number[];
  durableFailed: Array<{ id: number; error: ErrorData }>;
  currentFile?: string;
  /**
   * The last batch handled: its shared slabs and those of every batch before it are free for reuse (backends do not
   * keep `frame.data` after `write` returns).
   */
  seq: number;
}

export type FromWorker =
  | { k: 'opened'; currentFile: string }
  | { k: 'openFailed'; error: ErrorData }
  | AckMessage
  | { k: 'split'; index: number; file: string; before: boolean }
  | { k: 'error'; error: ErrorData; fatal: boolean }
  | { k: 'closed'; error?: ErrorData };

export const FIELDS = 9;
export const F_TS = 0;
export const F_URL = 1;
export const F_SER = 2;
export const F_SCHEMA = 3;
export const F_ACTION = 4;
export const F_CHUNK = 5;
export const F_OFFSET = 6;
export const F_LENGTH = 7;
/** The frame's publish time (µs since start), NaN when it has none (= its log time). */
export const F_PUBLISH = 8;

/** A BagError flattened for postMessage (structured clone keeps an Error's message but drops `code`). */
export interface ErrorData {
  code: BagErrorCode;
  message: string;
  file?: string;
  url?: string;
  offset?: number;
  stack?: string;
  cause?: string;
}

export function errorToData(error: BagError): ErrorData {
  const data: ErrorData = { code: error.code, message: error.message };
  if (error.file !== undefined) data.file = error.file;
  if (error.url !== undefined) data.url = error.url;
  if (error.offset !== undefined) data.offset = error.offset;
  if (error.stack !== undefined) data.stack = error.stack;
  if (error.cause !== undefined) data.cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
  return data;
}

/** Rebuilds the worker's BagError on the producer side, with the same code, message and context. */
export function dataToError(data: ErrorData): BagError {
  const error = new BagError(data.code, data.message, data.cause === undefined ? {} : { cause: new Error(data.cause) });
  // The message already carries the context text, so set the fields directly instead of formatting it again.
  const fields = error as { -readonly [K in 'file' | 'url' | 'offset']?: BagError[K] };
  if (data.file !== undefined) fields.file = data.file;
  if (data.url !== undefined) fields.url = data.url;
  if (data.offset !== undefined) fields.offset = data.offset;
  if (data.stack !== undefined) error.stack = `${data.stack}\n    (in the writer worker)`;
  return error;
}
