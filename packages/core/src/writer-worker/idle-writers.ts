import type { WorkerLink, WorkerRuntime } from '../runtime/worker-link.js';
import { spawnWorker, type WorkerEntries } from '../runtime/spawn-worker.js';
import { unrefTimer } from '../util/schedule.js';
import { SpareSlabs } from '../writer/slab-pool.js';

/**
 * How long a writer worker that closed its file cleanly waits for the next recording before it ends. Starting a worker
 * costs 100–400 ms (a thread, an isolate, the backend module and its WebAssembly codecs), more than writing a
 * million small frames; a process that records one bag after another (split recordings, a CLI converting files, a
 * server) pays it once. Idle, the worker is unref'd and holds no file: it never keeps a process alive.
 */
const IDLE_MS = 10_000;

/**
 * The shared slabs finished recordings of this process left for the next (module state: every writer shares them),
 * at most 64 MiB, kept as long as an idle worker waits.
 */
export const spareSlabs = new SpareSlabs(64 * 1024 * 1024, IDLE_MS);

/** The writer's worker program, one module per adapter (see `runtime/spawn-worker.ts`). */
const WRITER_ENTRIES: WorkerEntries = {
  node: new URL('./entry-node.js', import.meta.url),
  web: new URL('./entry-web.js', import.meta.url),
  label: 'writer',
};

/**
 * A writer worker's link whose handlers can be replaced, so the worker can serve one recording after another:
 * `release()` parks it for the next `writerWorker()` of the same runtime (one at most per runtime; a second is ended).
 */
export class WriterWorker {
  private messageHandler: (message: unknown) => void = () => {};
  private failureHandler: (error: Error) => void = () => {};
  private dead = false;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;

  private constructor(private readonly link: WorkerLink) {
    link.onMessage((message) => this.messageHandler(message));
    link.onFailure((error) => {
      this.dead = true;
      if (idle.get(link.runtime) === this) this.forget();
      this.failureHandler(error);
    });
  }

  get runtime(): WorkerRuntime {
    return this.link.runtime;
  }

  post(message: unknown, transfer?: ArrayBuffer[]): void {
    this.link.post(message, transfer);
  }

  onMessage(handler: (message: unknown) => void): void {
    this.messageHandler = handler;
  }

  onFailure(handler: (error: Error) => void): void {
    this.failureHandler = handler;
  }

  ref(): void {
    this.link.ref();
  }

  unref(): void {
    this.link.unref();
  }

  /** Ends the thread (after a failure, or when it cannot be reused). */
  exit(): Promise<void> {
    this.dead = true;
    return this.link.exit();
  }

  /** The recording is over and its file closed cleanly: keep the worker for the next one, or end it. */
  release(): Promise<void> {
    this.messageHandler = () => {};
    this.failureHandler = () => {};
    if (this.dead || idle.has(this.link.runtime)) return this.exit();
    this.link.unref();
    idle.set(this.link.runtime, this);
    this.idleTimer = setTimeout(() => {
      if (idle.get(this.link.runtime) === this) {
        this.forget();
        void this.exit();
      }
    }, IDLE_MS);
    unrefTimer(this.idleTimer);
    return Promise.resolve();
  }

  private forget(): void {
    idle.delete(this.link.runtime);
    if (this.idleTimer !== undefined) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /** A parked worker of this runtime if there is one, else a new one. */
  static async take(runtime: WorkerRuntime): Promise<WriterWorker> {
    const parked = idle.get(runtime);
    if (parked && !parked.dead) {
      parked.forget();
      return parked;
    }
    return new WriterWorker(await spawnWorker(runtime, WRITER_ENTRIES));
  }
}

const idle = new Map<WorkerRuntime, WriterWorker>();
