import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { BagError, type BagErrorCode, type ByteSource } from '@vlink/bag-core';
import { type LocalCacheOptions, localCopy, localCopySync } from './local-cache.js';
import { parseS3Url } from './s3-location.js';
import { DEFAULT_TAIL_BYTES, S3Object } from './s3-object.js';
import type { S3Options } from './s3-options.js';

/** Where and as whom (`S3Options`, not `fetch`: the helper thread uses its own), the tail size and the local cache. */
export type S3SourceOptions = Omit<S3Options, 'fetch'> & LocalCacheOptions & { tailBytes?: number };

/** A miss fetches at least this much, so a header and the records after it cost one request. */
export const READ_AHEAD_BYTES = 256 * 1024;
/**
 * While reads go forward through the object (a full read, chunk after chunk), each miss fetches twice as much as the
 * one before, up to this: a full read then costs a few large requests instead of one per chunk (every request is a
 * round trip, and some servers pay per request for the whole object), with memory bounded by this one block.
 */
export const MAX_READ_AHEAD_BYTES = 32 * 1024 * 1024;
/** A read this far past the block held still counts as going forward (MCAP's message indexes sit between chunks). */
const FORWARD_GAP_BYTES = 1024 * 1024;
/** How long one range may take before the read fails (a stalled connection must not hang the reader). */
const RANGE_TIMEOUT_MS = 120_000;

/**
 * The helper thread doing ranged GETs for every source of one set of options, with its answer channel and wake-up
 * word. One is enough: a reading thread waits for each request, so only one is ever in flight; sharing it keeps a
 * split recording of a hundred segments at one thread. It ends when the last source using it closes.
 */
interface RangeHelper {
  worker: Worker;
  reply: MessageChannel;
  signal: Int32Array;
  users: number;
}

const helpers = new Map<string, RangeHelper>();

/**
 * An S3 object as core's synchronous `ByteSource`. Opening fetches the size and the tail (`S3Object.open`); a read
 * outside what is held is one ranged GET of at least `READ_AHEAD_BYTES` (growing to `MAX_READ_AHEAD_BYTES` while reads
 * go forward), done on a helper thread while this thread
 * waits (`Atomics.wait`): the backend reader seam is synchronous. The wait blocks this thread's event loop for the
 * duration of the request, as a local file read would.
 */
export class S3ByteSource implements ByteSource {
  /** Requests and bytes, the open's included. */
  readonly stats = { requests: 0, bytes: 0 };
  private helper: RangeHelper | undefined;
  private closed = false;
  private block: { offset: number; bytes: Uint8Array } = { offset: 0, bytes: new Uint8Array(0) };
  /** The read-ahead of the next miss: `READ_AHEAD_BYTES`, doubled while reads go forward. */
  private readAhead = READ_AHEAD_BYTES;

  private constructor(
    /** The object (its client's `stats` count the async requests: the open's and a local copy's). */
    readonly object: S3Object,
    private readonly options: S3SourceOptions,
  ) {
    this.stats.requests = object.client.stats.requests;
    this.stats.bytes = object.client.stats.bytes;
  }

  static async open(
    url: string,
    options: Omit<S3Options, 'fetch'> & { tailBytes?: number } = {},
  ): Promise<S3ByteSource> {
    return new S3ByteSource(await S3Object.open(url, options), options);
  }

  /**
   * `open` done at once: the size, ETag and tail come through the helper thread while this thread waits (a split
   * recording's segment opened when a synchronous read reaches it). Costs the same one request.
   */
  static openSync(url: string, options: S3SourceOptions = {}): S3ByteSource {
    const tailBytes = Math.max(1, options.tailBytes ?? DEFAULT_TAIL_BYTES);
    const helper = acquireHelper(options);
    let answer: RangeReply;
    try {
      answer = ask(helper, parseS3Url(url), -tailBytes, tailBytes, url);
    } catch (error) {
      releaseHelper(helper);
      throw error;
    }
    const { cacheDir: _d, maxCacheBytes: _m, tailBytes: _t, ...s3 } = options;
    const source = new S3ByteSource(S3Object.fromTail(url, s3, answer), options);
    source.helper = helper;
    source.stats.requests += answer.requests;
    source.stats.bytes += answer.transferred;
    return source;
  }

  get name(): string {
    return this.object.url;
  }

  size(): number {
    return this.object.size;
  }

  read(offset: number, length: number): Uint8Array {
    const held = this.object.cached(offset, length) ?? this.fromBlock(offset, length);
    if (held) return held;
    const blockEnd = this.block.offset + this.block.bytes.length;
    // Going forward: past the start of the block held (a chunk straddling its end counts) and not far beyond it.
    const forward = this.block.bytes.length > 0 && offset > this.block.offset && offset <= blockEnd + FORWARD_GAP_BYTES;
    this.readAhead = forward ? Math.min(this.readAhead * 2, MAX_READ_AHEAD_BYTES) : READ_AHEAD_BYTES;
    const fetchLength = Math.min(Math.max(length, this.readAhead), this.object.size - offset);
    this.block = { offset, bytes: this.fetch(offset, fetchLength) };
    return this.fromBlock(offset, length)!;
  }

  /** The whole object in the bounded local cache (`.vdb`: SQLite needs a file); see `localCopy`. */
  localCopy(extension: string): Promise<string> {
    const { cacheDir, maxCacheBytes } = this.options;
    return localCopy(this.object, extension, {
      ...(cacheDir === undefined ? {} : { cacheDir }),
      ...(maxCacheBytes === undefined ? {} : { maxCacheBytes }),
    });
  }

  /** `localCopy` done at once, piece by piece through the helper thread (the same cache, names and bound). */
  localCopySync(extension: string): string {
    const { cacheDir, maxCacheBytes } = this.options;
    return localCopySync(this.object, (offset, length) => this.fetch(offset, length), extension, {
      ...(cacheDir === undefined ? {} : { cacheDir }),
      ...(maxCacheBytes === undefined ? {} : { maxCacheBytes }),
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const helper = this.helper;
    this.helper = undefined;
    if (helper) releaseHelper(helper);
  }

  private fromBlock(offset: number, length: number): Uint8Array | undefined {
    const start = offset - this.block.offset;
    if (start < 0 || start + length > this.block.bytes.length) return undefined;
    return this.block.bytes.subarray(start, start + length);
  }

  private fetch(offset: number, length: number): Uint8Array {
    if (!(offset >= 0 && length > 0 && offset + length <= this.object.size))
      throw new BagError(
        'CORRUPT_FILE',
        `read of ${length} bytes at ${offset} is outside the ${this.object.size}-byte object`,
        {
          file: this.name,
        },
      );
    if (this.closed) throw new BagError('CLOSED', 'the S3 source is closed', { file: this.name });
    this.helper ??= acquireHelper(this.options);
    const answer = ask(this.helper, parseS3Url(this.object.url), offset, length, this.name);
    this.stats.requests += answer.requests;
    this.stats.bytes += answer.transferred;
    if (answer.bytes.length !== length)
      throw new BagError('IO_ERROR', `S3 sent ${answer.bytes.length} of ${length} bytes at ${offset}`, {
        file: this.name,
      });
    return answer.bytes;
  }
}

/** What the helper thread answers to one range. */
interface RangeReply {
  bytes: Uint8Array;
  objectSize: number;
  etag: string;
  requests: number;
  transferred: number;
}

/** One range through the helper thread, this thread waiting (`offset` < 0: the object's last `length` bytes). */
function ask(
  helper: RangeHelper,
  location: ReturnType<typeof parseS3Url>,
  offset: number,
  length: number,
  name: string,
): RangeReply {
  const { worker, signal, reply } = helper;
  Atomics.store(signal, 0, 0);
  worker.postMessage({ location, offset, length });
  if (Atomics.wait(signal, 0, 0, RANGE_TIMEOUT_MS) === 'timed-out')
    throw new BagError('IO_ERROR', `no answer from S3 within ${RANGE_TIMEOUT_MS / 1000} s`, { file: name });
  const answer = receiveMessageOnPort(reply.port1)?.message as
    | RangeReply
    | { error: { code: BagErrorCode; message: string } }
    | undefined;
  if (!answer) throw new BagError('INTERNAL', 'the S3 helper thread woke without an answer', { file: name });
  if ('error' in answer) throw new BagError(answer.error.code, answer.error.message, { file: name });
  return answer;
}

/** The helper thread of these options, started on first use; one more user. */
function acquireHelper(options: S3SourceOptions): RangeHelper {
  const key = JSON.stringify(options);
  let helper = helpers.get(key);
  if (!helper) {
    const reply = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(new URL('./range-worker.js', import.meta.url), {
      workerData: { options, reply: reply.port2, signal },
      transferList: [reply.port2],
    });
    worker.unref();
    helper = { worker, reply, signal, users: 0 };
    helpers.set(key, helper);
  }
  helper.users++;
  return helper;
}

/** One user less; the thread ends with its last user. */
function releaseHelper(helper: RangeHelper): void {
  if (--helper.users > 0) return;
  for (const [key, value] of helpers) if (value === helper) helpers.delete(key);
  void helper.worker.terminate();
  helper.reply.port1.close();
}
