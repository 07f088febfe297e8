import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import type { RangeReply, RangeRequest } from './range-helper.js';
import { S3Client } from './s3-client.js';
import type { S3Location } from './s3-location.js';
import type { S3Options } from './s3-options.js';

/**
 * The S3 byte sources' helper thread (one per set of options, shared by their sources): does the ranged GETs (async
 * fetch) the reading thread waits for with `Atomics.wait`, answers on `reply`, then wakes it through `signal`; and
 * the prefetches a source asks for while it reads what it has (`range-helper.ts` has the protocol).
 */
interface Setup {
  options: Omit<S3Options, 'fetch'>;
  reply: MessagePort;
  signal: Int32Array;
}

type Outcome = RangeReply | { error: { code: string; message: string } };

const { options, reply, signal } = workerData as Setup;
const client = new S3Client(options);
/** Each source's prefetch under way or done (its answer, never rejected), and where its bytes go on Deno. */
const prefetches = new Map<number, { outcome: Promise<Outcome>; shared: SharedArrayBuffer | undefined }>();

async function fetchRange(location: S3Location, offset: number, length: number): Promise<Outcome> {
  const before = client.stats.requests;
  try {
    // A negative offset asks for the object's last `length` bytes (a suffix range), as `S3Object.open` does.
    const { bytes, objectSize, etag } = await client.getRange(location, offset, length);
    return { bytes, objectSize, etag, requests: client.stats.requests - before, transferred: bytes.length };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    return { error: { code: e.code ?? 'IO_ERROR', message: e.message ?? String(error) } };
  }
}

/**
 * Answers the waiting thread and wakes it. The bytes go into `shared` when the asker gave one (Deno, see
 * `range-helper.ts`), else they are moved, not copied, when they fill their buffer.
 */
function answer(outcome: Outcome, shared: SharedArrayBuffer | undefined): void {
  if ('bytes' in outcome && shared) {
    const { bytes, ...rest } = outcome;
    const length = Math.min(bytes.length, shared.byteLength);
    new Uint8Array(shared, 0, length).set(bytes.subarray(0, length));
    reply.postMessage({ ...rest, sharedLength: length });
  } else if ('bytes' in outcome) {
    const { bytes } = outcome;
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const moved = whole ? bytes : bytes.slice();
    reply.postMessage({ ...outcome, bytes: moved }, [moved.buffer as ArrayBuffer]);
  } else reply.postMessage(outcome);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

parentPort!.on('message', async (request: RangeRequest) => {
  switch (request.kind) {
    case 'get':
      return answer(await fetchRange(request.location, request.offset, request.length), request.shared);
    case 'prefetch':
      prefetches.set(request.source, {
        outcome: fetchRange(request.location, request.offset, request.length),
        shared: request.shared,
      });
      return;
    case 'take': {
      const pending = prefetches.get(request.source);
      prefetches.delete(request.source);
      if (!pending)
        return answer({ error: { code: 'INTERNAL', message: 'no prefetch under way for this source' } }, undefined);
      return answer(await pending.outcome, pending.shared);
    }
    case 'drop':
      prefetches.delete(request.source);
      return;
  }
});
