import { BagError, defaultWorkerRuntime, type WorkerRuntime } from '@vlink/bag';
import { HttpError } from '../http/errors.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import { PoolWorker, lostWorker } from './pool-worker.js';
import type { InitMessage, Job } from './protocol.js';

/** How long a worker has to answer `alive` after a `cancel` before it counts as stuck and is terminated. */
const GRACE_MS = 2_000;
/** How long a bag that hung a worker is refused (unless the file changes first). */
const QUARANTINE_MS = 10 * 60_000;

export interface RunOptions {
  deadlineMs: number;
  /** The bag the job is about: for quarantine, worker affinity and the timeout message. */
  bag?: ResolvedBag;
  /** Run on this worker (a stream's pulls go to the worker holding the stream). */
  worker?: PoolWorker;
  /** The client went away: the job is cancelled and fails with `ABORTED`. */
  signal?: AbortSignal;
  /** Names the work in a timeout message ("opening", "reading"). */
  what: string;
}

/**
 * A fixed set of worker threads doing the server's bag work (opening, info, SQLite reads, decompression, decoding,
 * JSON), so the event loop that answers `/v1/health` and every other client only moves bytes. Each job has a deadline;
 * past it the request fails with `TIMEOUT` and the worker is asked to drop the job. A worker that cannot even answer
 * that (its thread is stuck in a synchronous call: a SQLite statement cannot be interrupted) is terminated, the jobs it
 * held fail with `UNAVAILABLE`, and the bag that hung it is refused until its file changes. A replacement starts with
 * the next job.
 */
export class BagPool {
  private readonly workers: PoolWorker[] = [];
  private spawning: Promise<void> | undefined;
  private readonly quarantine = new Map<string, { size: number; mtimeMs: number; until: number }>();
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly init: () => InitMessage,
    private readonly runtime: WorkerRuntime | undefined = defaultWorkerRuntime(),
  ) {}

  /** Why workers could not be started, once that happened: the server then does the work itself. */
  private spawnFailure: unknown;

  /** Whether this runtime has worker threads that start (else the server does the work itself). */
  get available(): boolean {
    return this.runtime !== undefined && this.size > 0 && this.spawnFailure === undefined;
  }

  async run(job: Job, options: RunOptions): Promise<{ value: unknown; worker: PoolWorker }> {
    if (this.closed) throw new BagError('CLOSED', 'the server is closing');
    const { bag } = options;
    if (bag) this.assertNotQuarantined(bag);
    const worker = options.worker ?? (await this.pick(bag));
    let jid = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const answer = worker.call(job, (id) => (jid = id));
    const limits = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(timeout(options));
        this.giveUp(worker, jid, bag);
      }, options.deadlineMs);
      if (options.signal) {
        onAbort = () => {
          reject(new BagError('ABORTED', 'the client went away'));
          worker.forget(jid);
          worker.cancel(jid);
        };
        if (options.signal.aborted) onAbort();
        else options.signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    try {
      return { value: await Promise.race([answer, limits]), worker };
    } finally {
      clearTimeout(timer);
      if (onAbort) options.signal?.removeEventListener('abort', onAbort);
      answer.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.spawning?.catch(() => undefined);
    await Promise.all(this.workers.splice(0).map((w) => w.terminate(new BagError('CLOSED', 'the server is closing'))));
  }

  /**
   * Past the deadline: drop the job, ask the worker to cancel it, and terminate the worker when it does not answer
   * within GRACE_MS (stuck in a synchronous call); the bag that did that is quarantined.
   */
  private giveUp(worker: PoolWorker, jid: number, bag: ResolvedBag | undefined): void {
    worker.forget(jid);
    const asked = performance.now();
    worker.cancel(jid);
    const check = setTimeout(() => {
      if (worker.dead || worker.lastHeard >= asked) return;
      if (bag)
        this.quarantine.set(bag.path, { size: bag.size, mtimeMs: bag.mtimeMs, until: Date.now() + QUARANTINE_MS });
      this.remove(worker, lostWorker());
    }, GRACE_MS);
    (check as { unref?: () => void }).unref?.();
  }

  private assertNotQuarantined(bag: ResolvedBag): void {
    const entry = this.quarantine.get(bag.path);
    if (!entry) return;
    if (entry.size !== bag.size || entry.mtimeMs !== bag.mtimeMs || entry.until < Date.now()) {
      this.quarantine.delete(bag.path);
      return;
    }
    throw new HttpError(
      'TIMEOUT',
      `bag "${bag.id}" made a worker hang and is refused until the file changes (or for ${QUARANTINE_MS / 60_000} minutes)`,
    );
  }

  /** The least loaded worker; among equals the one the bag hashes to, so its readers and caches get reused. */
  private async pick(bag: ResolvedBag | undefined): Promise<PoolWorker> {
    if (this.workers.length < this.size) await this.fill();
    if (this.workers.length === 0) throw lostWorker();
    const least = Math.min(...this.workers.map((w) => w.load));
    const preferred = this.workers[bag ? hash(bag.path) % this.workers.length : 0]!;
    return preferred.load <= least ? preferred : this.workers.find((w) => w.load === least)!;
  }

  private fill(): Promise<void> {
    this.spawning ??= (async () => {
      try {
        while (!this.closed && this.workers.length < this.size) {
          let worker: PoolWorker;
          try {
            worker = await PoolWorker.spawn(this.runtime!, this.init(), (w) => this.remove(w, lostWorker()));
          } catch (error) {
            if (this.workers.length === 0) this.spawnFailure = error;
            throw error;
          }
          if (this.closed) await worker.terminate();
          else this.workers.push(worker);
        }
      } finally {
        this.spawning = undefined;
      }
    })();
    return this.spawning;
  }

  private remove(worker: PoolWorker, error: Error): void {
    const at = this.workers.indexOf(worker);
    if (at >= 0) this.workers.splice(at, 1);
    void worker.terminate(error);
  }
}

function timeout(options: RunOptions): HttpError {
  const subject = options.bag ? ` bag "${options.bag.id}"` : ' the stream';
  return new HttpError(
    'TIMEOUT',
    `${options.what}${subject} took longer than ${options.deadlineMs / 1000} s; the server gave up on it`,
  );
}

/** FNV-1a: a stable spread of paths over workers. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
