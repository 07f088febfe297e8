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

/** A range's answer: its bytes, or (when they went into the asker's shared buffer) how many there are. */
type Outcome =
  | RangeReply
  | (Omit<RangeReply, 'bytes'> & { sharedLength: number })
  | { error: { code: string; message: string } };

const { options, reply, signal } = workerData as Setup;
const client = new S3Client(options);
/** Each source's prefetch under way or done (its answer, never rejected). */
const prefetches = new Map<number, Promise<Outcome>>();

/**
 * One range, its bytes read straight into `shared` when the asker gave one (Deno, see `range-helper.ts`), else into
 * a buffer of their own.
 */
async function fetchRange(
  location: S3Location,
  offset: number,
  length: number,
  shared: SharedArrayBuffer | undefined,
): Promise<Outcome> {
  const before = client.stats.requests;
  const requests = () => client.stats.requests - before;
  try {
    // A negative offset asks for the object's last `length` bytes (a suffix range), as `S3Object.open` does.
    if (shared) {
      const into = new Uint8Array(shared, 0, Math.min(length, shared.byteLength));
      const { length: sharedLength, objectSize, etag } = await client.getRangeInto(location, offset, length, into);
      return { sharedLength, objectSize, etag, requests: requests(), transferred: sharedLength };
    }
    const { bytes, objectSize, etag } = await client.getRange(location, offset, length);
    return { bytes, objectSize, etag, requests: requests(), transferred: bytes.length };
  } catch (error) {
    const e = error as { code?: string; message?: string };
    return { error: { code: e.code ?? 'IO_ERROR', message: e.message ?? String(error) } };
  }
}

/** Answers the waiting thread and wakes it. Bytes of their own are moved, not copied, when they fill their buffer. */
function answer(outcome: Outcome): void {
  if ('bytes' in outcome) {
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
      return answer(await fetchRange(request.location, request.offset, request.length, request.shared));
    case 'prefetch':
      prefetches.set(request.source, fetchRange(request.location, request.offset, request.length, request.shared));
      return;
    case 'take': {
      const pending = prefetches.get(request.source);
      prefetches.delete(request.source);
      if (!pending) return answer({ error: { code: 'INTERNAL', message: 'no prefetch under way for this source' } });
      return answer(await pending);
    }
    case 'drop':
      prefetches.delete(request.source);
      return;
  }
});
