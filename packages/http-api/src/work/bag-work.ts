import type { Info, SchemaData } from '@vlink/bag';
import type { MessageQuery, Position } from '../messages/cursor-token.js';
import type { ResolvedBag } from '../store/resolve-id.js';

/** `GET …/messages?format=json`: one page. */
export interface PageRequest {
  query: MessageQuery;
  position?: Position;
  limit: number;
  decode: boolean;
  /** With `decode`: protobuf fields by their JSON name (`PayloadDecoder`'s `jsonNames`). */
  jsonNames?: boolean;
}

/** `GET …/messages?format=ndjson|binary`: the whole window as a stream. */
export interface StreamRequest {
  query: MessageQuery;
  position?: Position;
  /** A cap on frames; undefined = the whole window. */
  limit?: number;
  format: 'ndjson' | 'binary';
  decode: boolean;
  /** With `decode`: protobuf fields by their JSON name (`PayloadDecoder`'s `jsonNames`). */
  jsonNames?: boolean;
}

export interface DensityRequest {
  buckets: number;
  beginMs: number;
  endMs: number;
  urls?: string[];
}

export interface TimingRequest {
  factor: number;
  urls?: string[];
}

/** `GET …/report`: core's `ReportOptions` without the signal. */
export interface ReportRequest {
  groups?: string[][];
  bins?: number;
  toleranceUs?: number;
}

/** What the listing shows of a bag: its message count and size, or the error its open failed with. */
export type BagFacts = { messageCount: number; fileSize: number; error?: undefined } | { error: Error };

/**
 * Everything the HTTP routes ask of a bag, as one seam with two implementations: `LocalBagWork` does the work on the
 * calling thread (inside the pool's workers, and for backends that cannot run in a worker), `PooledBagWork` sends it
 * to a worker thread with a deadline so the server's event loop only moves bytes. Answers that can be large come back
 * as finished JSON text, serialised where the work ran; a stream errors (with the BagError) when reading fails after
 * it started, and the route decides what the client sees.
 */
export interface BagWork {
  /** The bag's Info with `path` = the id (server paths never leave the server). */
  info(bag: ResolvedBag): Promise<Info>;
  schemas(bag: ResolvedBag): Promise<SchemaData[]>;
  /**
   * The facts of each bag, in order, a failure in its place (the call itself does not fail). Many bags per call: a
   * worker opens them one after the other instead of costing a round trip each, and keeps no reader or info of
   * theirs (a listing must not push out of the caches the bags clients are reading).
   */
  facts(bags: readonly ResolvedBag[]): Promise<BagFacts[]>;
  /** The bytes of attachment `index` of `info().attachments` (foreign formats that have them: MCAP). */
  attachment(bag: ResolvedBag, index: number): Promise<Uint8Array>;
  /** `{ factor, urls: [...] }` as JSON text. A long pass stops (`ABORTED`) when `signal` aborts. */
  timing(bag: ResolvedBag, request: TimingRequest, signal?: AbortSignal): Promise<string>;
  /** The validation report (core `analyzeReport`, `BagReport`) as JSON text, `path` = the bag's id. */
  report(bag: ResolvedBag, request: ReportRequest, signal?: AbortSignal): Promise<string>;
  /** The Density as JSON text. */
  density(bag: ResolvedBag, request: DensityRequest, signal?: AbortSignal): Promise<string>;
  /** `{ messages, next }` as JSON text. */
  page(bag: ResolvedBag, request: PageRequest, signal?: AbortSignal): Promise<string>;
  stream(bag: ResolvedBag, request: StreamRequest): Promise<ReadableStream<Uint8Array>>;
  close(): Promise<void>;
}
