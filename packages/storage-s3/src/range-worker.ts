import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { S3Client } from './s3-client.js';
import type { S3Location } from './s3-location.js';
import type { S3Options } from './s3-options.js';

/**
 * The S3 byte sources' helper thread (one per set of options, shared by their sources): does the ranged GETs (async
 * fetch) the reading thread waits for with `Atomics.wait`, answers on `reply`, then wakes it through `signal`.
 */
interface Setup {
  options: Omit<S3Options, 'fetch'>;
  reply: MessagePort;
  signal: Int32Array;
}

const { options, reply, signal } = workerData as Setup;
const client = new S3Client(options);

parentPort!.on(
  'message',
  async ({ location, offset, length }: { location: S3Location; offset: number; length: number }) => {
    const before = { ...client.stats };
    try {
      // A negative offset asks for the object's last `length` bytes (a suffix range), as `S3Object.open` does.
      const { bytes, objectSize, etag } = await client.getRange(location, offset, length);
      reply.postMessage({
        bytes,
        objectSize,
        etag,
        requests: client.stats.requests - before.requests,
        transferred: bytes.length,
      });
    } catch (error) {
      const e = error as { code?: string; message?: string };
      reply.postMessage({ error: { code: e.code ?? 'IO_ERROR', message: e.message ?? String(error) } });
    }
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  },
);
