// Backends for the writer's own tests (test-only: never built into dist). Like every worker-capable backend they live in
// a module the worker can import, and say so through `workerModule`.
import type { Backend, BackendWriter } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { memoryBackend } from '../testing/memory-backend.js';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the calling thread (a worker, or the producer in same-thread modes) like a slow disk would. */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * `.faultjson`: the memory backend, except that a frame on url `fail/storage` throws a storage error (the writer
 * fails), one on `fail/limit` is rejected with LIMIT_REACHED (counted, not fatal), and a path containing
 * `slow-<ms>` sleeps that long before every write. A frame on `ask/writer-thread` is rejected too, its message saying
 * what the backend was told in `RecordingContext.writerThread` (how a test sees the worker's side).
 */
export const faultBackend: Backend = {
  name: 'fault',
  extensions: ['.faultjson'],
  workerModule: import.meta.url,
  async createWriter(path, config, context) {
    const inner = await memoryBackend.createWriter(path, config, context);
    const delay = Number(/slow-(\d+)/.exec(path)?.[1] ?? 0);
    return new FaultWriter(inner, delay, context.writerThread === true);
  },
  openReader: (path, options) => memoryBackend.openReader(path, options),
};

class FaultWriter implements BackendWriter {
  constructor(
    private readonly inner: BackendWriter,
    private readonly delayMs: number,
    private readonly writerThread: boolean,
  ) {}
  write(frame: Frame, urlId: number): void {
    sleepSync(this.delayMs);
    if (frame.url === 'ask/writer-thread')
      throw new BagError('LIMIT_REACHED', `writerThread ${this.writerThread}`, { url: frame.url });
    if (frame.url === 'fail/storage') throw new BagError('IO_ERROR', 'disk on fire', { url: frame.url });
    if (frame.url === 'fail/limit') throw new BagError('LIMIT_REACHED', 'row limit reached', { url: frame.url });
    this.inner.write(frame, urlId);
  }
  writeSchema = (schema: Parameters<BackendWriter['writeSchema']>[0]) => this.inner.writeSchema(schema);
  setUrlLoss = (url: string, loss: number) => this.inner.setUrlLoss(url, loss);
  commit = () => this.inner.commit();
  tick = () => this.inner.tick();
  currentFile = () => this.inner.currentFile();
  close = () => this.inner.close();
}

/** `.lostjson`: claims a worker module that does not export it, so the worker cannot find the backend. */
export const lostBackend: Backend = {
  ...memoryBackend,
  name: 'lost',
  extensions: ['.lostjson'],
  workerModule: new URL('../testing/memory-backend.js', import.meta.url).href,
};
