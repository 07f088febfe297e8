import { DEFAULT_MAX_DEPTH } from '@vlink/bag-decode';

/**
 * What one request may cost. Every answer the server builds in memory is bounded by one of these, so a request
 * cannot make the server hold (or send) more than a known amount, whatever the bag holds.
 */
export interface WorkLimits {
  /** Largest JSON answer (info, schemas, timing, density, a messages page) in bytes; larger is 413. */
  maxResponseBytes: number;
  /** Largest `buckets × urls` of one `/density` answer; more is 413 (about 8 bytes of memory per cell). */
  maxDensityCells: number;
  /** With `decode=true`, payloads larger than this stay base64 ("too large to decode"). */
  maxDecodeBytes: number;
  /** With `decode=true`, JSON and protobuf values nested deeper than this stay base64. */
  maxDecodeDepth: number;
}

export const DEFAULT_LIMITS: WorkLimits = {
  maxResponseBytes: 64 * 1024 * 1024,
  maxDensityCells: 1_000_000,
  maxDecodeBytes: 16 * 1024 * 1024,
  maxDecodeDepth: DEFAULT_MAX_DEPTH,
};

/**
 * How long bag work may take before the server gives up on it (and, when the worker running it no longer answers,
 * terminates that worker). `openMs` covers opening a bag and reading its info and schemas; `requestMs` a whole JSON
 * answer (page, timing, density) and each chunk of a stream.
 */
export interface Deadlines {
  openMs: number;
  requestMs: number;
}

export const DEFAULT_DEADLINES: Deadlines = { openMs: 10_000, requestMs: 60_000 };
