import { BagError } from '../errors.js';
import { compressRaw } from './lzav/index.js';
import { decompress } from './lzav/decompress.js';

/**
 * VLink's per-message compression blob (`Bytes::compress_data`, format reference §3):
 * `17 49 B2 6F | original size, u32 big-endian | raw LZAV stream | A7 05 ED 71`.
 * Readers tell compressed rows from raw ones by the two magics alone, so both must be checked.
 */
export const FRAME_HEADER_MAGIC: Uint8Array = Uint8Array.of(0x17, 0x49, 0xb2, 0x6f);
export const FRAME_FOOTER_MAGIC: Uint8Array = Uint8Array.of(0xa7, 0x05, 0xed, 0x71);
/** Header magic + size + footer magic. */
export const FRAME_OVERHEAD = 12;
/** VLink's `kMaxCompressCacheSize`: larger payloads are stored raw. */
export const MAX_COMPRESS_INPUT = 1024 * 1024;
/** Frames claiming more than this are refused on read. */
export const MAX_DECOMPRESSED_SIZE = 256 * 1024 * 1024;
/** After this many failed attempts in a row a URL is never compressed again (`kCompressMaxIgnoreCnt`). */
export const MAX_COMPRESS_FAILURES = 5;

// The exported magics are plain (mutable) arrays for callers' convenience; the checks below use literals so a
// caller scribbling on them cannot change what we accept.
const H0 = 0x17,
  H1 = 0x49,
  H2 = 0xb2,
  H3 = 0x6f;
const F0 = 0xa7,
  F1 = 0x05,
  F2 = 0xed,
  F3 = 0x71;

/** True when `blob` is at least 13 bytes and carries both magics (format reference §3.2); the LZAV body is not inspected. */
export function isCompressionFrame(blob: Uint8Array): boolean {
  const n = blob.length;
  return (
    n >= FRAME_OVERHEAD + 1 &&
    blob[0] === H0 &&
    blob[1] === H1 &&
    blob[2] === H2 &&
    blob[3] === H3 &&
    blob[n - 4] === F0 &&
    blob[n - 3] === F1 &&
    blob[n - 2] === F2 &&
    blob[n - 1] === F3
  );
}

/** The original size recorded in a frame (u32 big-endian at bytes 4..7). */
export function frameOriginalSize(blob: Uint8Array): number {
  if (blob.length < 8) throw new BagError('CORRUPT_DATA', `compression frame too short (${blob.length} bytes)`);
  return ((blob[4] << 24) | (blob[5] << 16) | (blob[6] << 8) | blob[7]) >>> 0;
}

/**
 * Wraps `data` in a compression frame; `level > 3` uses the high-ratio compressor. Returns `undefined` for empty
 * input or input over 1 MiB, which VLink counts as a failed attempt.
 */
export function compressFrame(data: Uint8Array, level: number): Uint8Array | undefined {
  if (data.length === 0 || data.length > MAX_COMPRESS_INPUT) return undefined;
  const frame = compressRaw(data, level, 8, 4);
  const n = frame.length;
  frame[0] = H0;
  frame[1] = H1;
  frame[2] = H2;
  frame[3] = H3;
  frame[4] = data.length >>> 24;
  frame[5] = (data.length >>> 16) & 0xff;
  frame[6] = (data.length >>> 8) & 0xff;
  frame[7] = data.length & 0xff;
  frame[n - 4] = F0;
  frame[n - 3] = F1;
  frame[n - 2] = F2;
  frame[n - 1] = F3;
  return frame;
}

/** Unwraps a frame. Throws `BagError` `CORRUPT_DATA` unless the size is in [1, 256 MiB] and the body decodes to it. */
export function decompressFrame(blob: Uint8Array): Uint8Array {
  if (!isCompressionFrame(blob)) throw new BagError('CORRUPT_DATA', 'not a compression frame (bad length or magic)');
  const size = frameOriginalSize(blob);
  if (size < 1 || size > MAX_DECOMPRESSED_SIZE) {
    throw new BagError('CORRUPT_DATA', `compression frame claims ${size} bytes (allowed 1..${MAX_DECOMPRESSED_SIZE})`);
  }
  return decompress(blob.subarray(8, blob.length - 4), size);
}

export interface CompressionDeciderOptions {
  /** The writer's `compress` is `auto` or `lzav`. */
  enabled: boolean;
  /** `compress_start_size`: smaller payloads are stored raw. Default 128. */
  startSize?: number;
  /** `compress_level`: above 3 selects the high-ratio compressor. Default 3. */
  level?: number;
  /** `ignore_compress_urls`: exact URLs that are never compressed. */
  ignoreUrls?: Iterable<string>;
}

/** Per-URL failure counters, as saved by {@link CompressionDecider.snapshot}. */
export type CompressionDeciderSnapshot = ReadonlyMap<string, number>;

/**
 * VLink's writer-side rules for compressing `.vdb` payloads (format reference §3.3): try only payloads of at least `startSize`
 * bytes on URLs not ignored and with fewer than 5 failures in a row; keep the frame only if it is smaller than 95%
 * of the payload. A success resets the URL's counter, anything else increments it; at 5 the URL is given up on for
 * the writer's lifetime (splits included). The SQLite writer snapshots the counters when a transaction starts and
 * restores them on rollback.
 */
export class CompressionDecider {
  readonly enabled: boolean;
  readonly startSize: number;
  readonly level: number;
  private readonly ignored: ReadonlySet<string>;
  private failures = new Map<string, number>();

  constructor(options: CompressionDeciderOptions) {
    const { enabled, startSize = 128, level = 3, ignoreUrls = [] } = options;
    if (!Number.isInteger(startSize) || startSize < 0) {
      throw new BagError('INVALID_ARGUMENT', `compression startSize must be a non-negative integer, got ${startSize}`);
    }
    if (typeof level !== 'number' || Number.isNaN(level)) {
      throw new BagError('INVALID_ARGUMENT', `compression level must be a number, got ${String(level)}`);
    }
    this.enabled = enabled;
    this.startSize = startSize;
    this.level = level;
    this.ignored = new Set(ignoreUrls);
  }

  /** Returns what to store for `data` on `url`: a compression frame, or `data` itself. */
  maybeCompress(url: string, data: Uint8Array): Uint8Array {
    if (!this.enabled || data.length < this.startSize || this.ignored.has(url)) return data;
    const failed = this.failures.get(url) ?? 0;
    if (failed >= MAX_COMPRESS_FAILURES) return data;
    const frame = compressFrame(data, this.level);
    if (frame !== undefined && frame.length < data.length * 0.95) {
      this.failures.delete(url);
      return frame;
    }
    this.failures.set(url, failed + 1);
    return data;
  }

  /** Failed attempts in a row for `url` (0 after a success). */
  failureCount(url: string): number {
    return this.failures.get(url) ?? 0;
  }

  /** A copy of the counters; later calls do not change it. */
  snapshot(): CompressionDeciderSnapshot {
    return new Map(this.failures);
  }

  /** Puts the counters back to a {@link snapshot}. */
  restore(snapshot: CompressionDeciderSnapshot): void {
    this.failures = new Map(snapshot);
  }
}
