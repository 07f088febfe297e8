import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { BagError, type BagErrorCode } from '@vlink/bag-core';
import { inheritedExecArgv } from '@vlink/bag-core/internal';
import type { S3Location } from './s3-location.js';
import { SharedBuffers } from './shared-buffers.js';
import type { S3Options } from './s3-options.js';

/** How long one range may take before the read fails (a stalled connection must not hang the reader). */
const RANGE_TIMEOUT_MS = 120_000;
/**
 * How long a helper thread without users waits for the next source before it ends. Starting one costs tens to
 * hundreds of ms (a thread, an isolate, the S3 client), more than reading a small bag's summary: a process that opens
 * one bag after another (a catalog run, a server, a split recording's segments in turn) pays it once. Idle, the
 * thread is unref'd and holds no connection the process waits for.
 */
const IDLE_MS = 5_000;

/** What the helper thread answers to one range. */
export interface RangeReply {
  bytes: Uint8Array;
  objectSize: number;
  etag: string;
  requests: number;
  transferred: number;
}

/**
 * What the reading thread asks of the helper thread (`range-worker.ts`). `get` is answered while the asker waits;
 * `prefetch` starts a ranged GET and keeps its answer for the asker (`source`), answered by a later `take` (waiting
 * for it if it is still under way); `drop` forgets it (a closing source drops too, which frees its shared buffers).
 * A source has at most one prefetch.
 */
export type RangeRequest =
  | { kind: 'get'; location: S3Location; offset: number; length: number; shared?: SharedArrayBuffer }
  | {
      kind: 'prefetch';
      source: number;
      location: S3Location;
      offset: number;
      length: number;
      shared?: SharedArrayBuffer;
    }
  | { kind: 'take'; source: number }
  | { kind: 'drop'; source: number };

/**
 * On Deno the answer's bytes travel through a SharedArrayBuffer the asker provides (`shared`), and the message says
 * only how many there are: Deno's `receiveMessageOnPort` takes about 7 s for a 32 MiB Uint8Array, transferred or not
 * (hand-measured, Deno 2.9.6; Node and Bun take under 3 ms), which made a full S3 read 50–70× slower than a GET
 * there. Elsewhere the buffer is transferred, which copies nothing.
 */
const VIA_SHARED_MEMORY = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

/**
 * The helper thread doing ranged GETs for every source of one set of options, with its answer channel and wake-up
 * word. One is enough: a reading thread waits for each answer, so only one is awaited at a time (a prefetch runs
 * beside it); sharing it keeps a split recording of a hundred segments at one thread. It ends when the last source
 * using it closes.
 */
export interface RangeHelper {
  worker: Worker;
  reply: MessageChannel;
  signal: Int32Array;
  users: number;
  /** Ends an idle helper after `IDLE_MS`. */
  idleTimer?: ReturnType<typeof setTimeout> | undefined;
  /** The shared buffers the answers go into, on Deno (`VIA_SHARED_MEMORY`). */
  buffers: SharedBuffers;
}

const helpers = new Map<string, RangeHelper>();
/** How many helper threads this thread started (the tests check that an idle one is reused). */
export const helperThreads = { started: 0 };

/** The helper thread of these options, started on first use; one more user. */
export function acquireHelper(options: Omit<S3Options, 'fetch'>): RangeHelper {
  const key = JSON.stringify(options);
  let helper = helpers.get(key);
  if (!helper) {
    const reply = new MessageChannel();
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(new URL('./range-worker.js', import.meta.url), {
      workerData: { options, reply: reply.port2, signal },
      transferList: [reply.port2],
      // Not the parent's flags as they are: under `node --input-type=module -` the helper's module failed to load.
      execArgv: inheritedExecArgv(),
    });
    worker.unref();
    helperThreads.started++;
    helper = { worker, reply, signal, users: 0, buffers: new SharedBuffers() };
    helpers.set(key, helper);
  }
  if (helper.idleTimer !== undefined) clearTimeout(helper.idleTimer);
  helper.idleTimer = undefined;
  helper.users++;
  return helper;
}

/** One user less; the thread ends `IDLE_MS` after its last user left, unless a new one came. */
export function releaseHelper(helper: RangeHelper): void {
  if (--helper.users > 0) return;
  helper.idleTimer = setTimeout(() => endHelper(helper), IDLE_MS);
  (helper.idleTimer as { unref?: () => void }).unref?.();
}

function endHelper(helper: RangeHelper): void {
  for (const [key, value] of helpers) if (value === helper) helpers.delete(key);
  void helper.worker.terminate();
  helper.reply.port1.close();
}

/** Posts a request nobody waits for (`prefetch`, `drop`). */
export function tell(helper: RangeHelper, request: RangeRequest & { kind: 'prefetch' | 'drop' }): void {
  if (request.kind === 'prefetch' && VIA_SHARED_MEMORY) {
    const shared = helper.buffers.forPrefetch(request.source, request.length);
    helper.worker.postMessage({ ...request, shared });
    return;
  }
  if (request.kind === 'drop') helper.buffers.drop(request.source);
  helper.worker.postMessage(request);
}

/**
 * A `get` or `take` through the helper thread, this thread waiting (`get` offset < 0: the object's last bytes).
 * `beforeCopy` runs once the answer is in, before its bytes are copied out of shared memory (Deno): a prefetch asked
 * for there is fetched while this thread copies (into fresh memory: about 15 ms for 32 MiB on Deno, mostly page
 * faults; 2 ms into memory used before; hand-measured).
 */
export function ask(
  helper: RangeHelper,
  request: RangeRequest & { kind: 'get' | 'take' },
  name: string,
  beforeCopy?: () => void,
): RangeReply {
  const { worker, signal, reply, buffers } = helper;
  let shared: SharedArrayBuffer | undefined;
  if (VIA_SHARED_MEMORY && request.kind === 'get') shared = buffers.forGet(request.length);
  if (request.kind === 'take') shared = buffers.take(request.source);
  Atomics.store(signal, 0, 0);
  worker.postMessage(shared && request.kind === 'get' ? { ...request, shared } : request);
  if (Atomics.wait(signal, 0, 0, RANGE_TIMEOUT_MS) === 'timed-out') {
    if (request.kind === 'get') buffers.abandonGet();
    throw new BagError('IO_ERROR', `no answer from S3 within ${RANGE_TIMEOUT_MS / 1000} s`, { file: name });
  }
  const answer = receiveMessageOnPort(reply.port1)?.message as
    | (RangeReply & { sharedLength?: number })
    | { error: { code: BagErrorCode; message: string } }
    | undefined;
  if (!answer) throw new BagError('INTERNAL', 'the S3 helper thread woke without an answer', { file: name });
  if ('error' in answer) throw new BagError(answer.error.code, answer.error.message, { file: name });
  beforeCopy?.();
  if (answer.sharedLength !== undefined) {
    if (!shared)
      throw new BagError('INTERNAL', 'the S3 helper thread answered in shared memory unasked', { file: name });
    // Copied out: the bytes are handed to readers, and some APIs refuse views of shared memory (TextDecoder).
    answer.bytes = new Uint8Array(answer.sharedLength);
    answer.bytes.set(new Uint8Array(shared, 0, answer.sharedLength));
    if (request.kind === 'take') buffers.taken(request.source, shared);
  }
  return answer;
}
