import { BagError, type BagErrorCode } from '@vlink/bag';
import { HttpError, type HttpErrorCode } from '../http/errors.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import type { DensityRequest, PageRequest, ReportRequest, StreamRequest, TimingRequest } from '../work/bag-work.js';
import type { WorkLimits } from '../work/limits.js';

/**
 * Messages between the server (`BagPool`) and its bag workers (`service.ts`). Jobs carry an id; every job gets exactly
 * one `done` or `failed` back. `cancel` asks a worker to drop a job past its deadline: a worker whose event loop is
 * free answers `alive` at once, one stuck in a synchronous call cannot, and is terminated.
 */

/** A backend the worker loads by module (`Backend.workerModule`) for the extensions it serves in the parent. */
export interface BackendModule {
  extensions: string[];
  name: string;
  module: string;
}

export interface InitMessage {
  k: 'init';
  root: string;
  backends: BackendModule[];
  limits: WorkLimits;
  readerCache: number;
  /**
   * The folder the worker makes its private copies in (a decompressed or WAL-mode rosbag2 storage, a salvaged
   * `.vdb`): named by the server, made by the worker at its first copy, and removed by the server once the worker has
   * ended, also when it terminated it.
   */
  scratch?: string;
}

export type Job =
  | { k: 'info'; bag: ResolvedBag }
  | { k: 'schemas'; bag: ResolvedBag }
  /**
   * The facts of `bags` in order, as `FactsData`; fewer (at least one) once `budgetMs` has passed. `progress` (an
   * Int32Array's buffer) gets the index of the bag being opened, so a job that hangs says which bag did it.
   */
  | { k: 'facts'; bags: ResolvedBag[]; budgetMs: number; progress?: SharedArrayBuffer }
  /** Answers the attachment's bytes as a transferred ArrayBuffer. */
  | { k: 'attachment'; bag: ResolvedBag; index: number }
  | { k: 'timing'; bag: ResolvedBag; request: TimingRequest }
  | { k: 'report'; bag: ResolvedBag; request: ReportRequest }
  | { k: 'density'; bag: ResolvedBag; request: DensityRequest }
  | { k: 'page'; bag: ResolvedBag; request: PageRequest }
  /** Opens a stream in the worker; answers its id. */
  | { k: 'stream'; bag: ResolvedBag; request: StreamRequest }
  /** The next chunks of an open stream (about `PULL_BYTES`); `done` once it ended. */
  | { k: 'pull'; sid: number }
  /** Drops an open stream (the client went away). */
  | { k: 'end'; sid: number };

export type ToWorker = InitMessage | { k: 'job'; jid: number; job: Job } | { k: 'cancel'; jid: number };

export interface PullResult {
  chunks: ArrayBuffer[];
  done: boolean;
  /** Reading failed after these chunks: the stream ends with this error. */
  error?: ErrorData;
}

export type FromWorker =
  /** Sent once the worker listens: messages posted earlier could be lost by a Web Worker. */
  | { k: 'hello' }
  /** Init done; `unavailable`: extensions whose backend module could not be loaded there. */
  | { k: 'ready'; unavailable: string[] }
  | { k: 'done'; jid: number; value: unknown }
  | { k: 'failed'; jid: number; error: ErrorData }
  | { k: 'alive'; jid: number };

/** One bag's facts (`BagFacts`) as posted back: the error flattened. */
export type FactsData = { messageCount: number; fileSize: number } | { error: ErrorData };

/** Bytes a pull gathers before answering: large enough to amortise a message, small enough to keep pace. */
export const PULL_BYTES = 256 * 1024;

/** An error flattened for postMessage (structured clone drops a BagError's `code` and its class). */
export interface ErrorData {
  http: boolean;
  code: string;
  message: string;
  reason: string;
  file?: string;
  offset?: number;
  url?: string;
}

export function errorToData(error: unknown): ErrorData {
  if (error instanceof HttpError)
    return { http: true, code: error.code, message: error.message, reason: error.message };
  const bag = BagError.isInstance(error) ? error : BagError.wrap(error, 'INTERNAL', 'bag worker failed');
  const data: ErrorData = {
    http: false,
    code: bag.code,
    message: bag.message,
    reason: (bag as { reason?: string }).reason ?? bag.message,
  };
  if (bag.file !== undefined) data.file = bag.file;
  if (bag.offset !== undefined) data.offset = bag.offset;
  if (bag.url !== undefined) data.url = bag.url;
  return data;
}

/** The worker's error rebuilt in the server, with the same code, reason and context. */
export function dataToError(data: ErrorData): Error {
  if (data.http) return new HttpError(data.code as HttpErrorCode, data.message);
  const error = new BagError(data.code as BagErrorCode, data.message);
  const fields = error as { -readonly [K in 'file' | 'url' | 'offset' | 'reason']?: BagError[K] };
  fields.reason = data.reason;
  if (data.file !== undefined) fields.file = data.file;
  if (data.url !== undefined) fields.url = data.url;
  if (data.offset !== undefined) fields.offset = data.offset;
  return error;
}
