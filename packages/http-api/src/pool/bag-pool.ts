import { BagError, defaultWorkerRuntime, type WorkerRuntime } from '@vlink/bag';
import { HttpError } from '../http/errors.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import { lostWorker, PoolWorker } from './pool-worker.js';
import type { InitMessage, Job } from './protocol.js';

/** How long a worker has to answer `alive` after a `cancel` before it counts as stuck and is terminated. */
const GRACE_MS = 5_000;
/** How long a bag that hung a worker is refused (unless the file changes first). */
const QUARANTINE_MS = 10 * 60_000;
const QUARANTINE_ENTRIES = 1000;

export interface RunOptions {
  /** Longest run once started, and longest wait for a free worker before that. */
  deadlineMs: number;
  /** The bag the job is about: for quarantine, worker affinity and the timeout message. */
  bag?: ResolvedBag;
  /** A job about many bags: the one it is on, asked when its deadline passes (quarantined as `bag` would be). */
  suspect?: () => ResolvedBag | undefined;
  /**
   * Work no client is watching bag by bag (the listing's opens): it waits while other jobs do, so a listing of
   * thousands of bags queued ahead does not delay a player's page.
   */
  background?: boolean;
  /** Run on this worker (a stream's pulls go to the worker holding the stream). */
  worker?: PoolWorker;
  /** The client went away: the job is cancelled and fails with `ABORTED`. */
  signal?: AbortSignal;
  /** Names the work in a timeout message ("opening", "reading"). */
  what: string;
}

interface Queued {
  job: Job;
  options: RunOptions;
  resolve(result: { value: unknown; worker: PoolWorker }): void;
  reject(error: Error): void;
  /** Clears the wait timer and the abort listener. */
  cleanup(): void;
}

/**
 * A fixed set of worker threads doing the server's bag work (opening, info, SQLite reads, decompression, decoding,
 * JSON), so the event loop that answers `/v1/health` and every other client only moves bytes.
 *
 * Each worker runs one job at a time; jobs wait in a queue for a free worker (a stream's pulls for the worker holding
 * the stream). So a stuck worker delays no other bag as long as another worker is free, and when one gets stuck the
 * job that did it is known: past its deadline the request fails with `TIMEOUT` and the worker is asked to drop the
 * job; a worker that cannot even answer that (its thread is stuck in a synchronous call: a SQLite statement cannot be
 * interrupted) is terminated, the streams it held fail with `UNAVAILABLE`, and that bag is refused until its file
 * changes. A replacement worker starts with the next job.
 */
export class BagPool {
  private readonly workers: PoolWorker[] = [];
  private readonly waiting: Queued[] = [];
  private readonly pinned = new Map<PoolWorker, Queued[]>();
  private spawning: Promise<void> | undefined;
  private readonly quarantine = new Map<string, { size: number; mtimeMs: number; until: number }>();
  private closed = false;
  /** Why workers could not be started, once that happened: the server then does the work itself. */
  private spawnFailure: unknown;
  /** Extensions whose backend a worker could not load: their bags are read on the server's thread. */
  readonly unavailable = new Set<string>();

  constructor(
    private readonly size: number,
    private readonly init: () => InitMessage,
    private readonly runtime: WorkerRuntime | undefined = defaultWorkerRuntime(),
  ) {}

  /** Whether this runtime has worker threads that start (else the server does the work itself). */
  get available(): boolean {
    return this.runtime !== undefined && this.size > 0 && this.spawnFailure === undefined;
  }

  run(job: Job, options: RunOptions): Promise<{ value: unknown; worker: PoolWorker }> {
    if (this.closed) return Promise.reject(new BagError('CLOSED', 'the server is closing'));
    if (options.bag) {
      const refused = this.quarantined(options.bag);
      if (refused) return Promise.reject(refused);
    }
    if (options.worker?.dead) return Promise.reject(lostWorker());
    return new Promise((resolve, reject) => {
      const queue = options.worker ? this.queueOf(options.worker) : this.waiting;
      let waitTimer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        remove(queue, queued);
        queued.cleanup();
        reject(new BagError('ABORTED', 'the client went away'));
      };
      const queued: Queued = {
        job,
        options,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(waitTimer);
          options.signal?.removeEventListener('abort', onAbort);
        },
      };
      if (options.signal?.aborted) return reject(new BagError('ABORTED', 'the client went away'));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      const armWait = () => {
        if (!queue.includes(queued)) return; // started (or gone) already
        waitTimer = setTimeout(() => {
          remove(queue, queued);
          queued.cleanup();
          reject(
            new HttpError(
              'TIMEOUT',
              `${options.what}${subject(options)} waited ${seconds(options)} s for a free worker; the server is busy`,
            ),
          );
        }, options.deadlineMs);
      };
      queue.push(queued);
      // Starting the workers (each imports the backends) is not waiting for a free one: the wait counts from then.
      if (this.workers.length === 0 && !options.worker) void this.fill().then(armWait, armWait);
      else armWait();
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.spawning?.catch(() => undefined);
    const closing = new BagError('CLOSED', 'the server is closing');
    for (const queued of [...this.waiting.splice(0), ...[...this.pinned.values()].flat()]) {
      queued.cleanup();
      queued.reject(closing);
    }
    this.pinned.clear();
    await Promise.all(this.workers.splice(0).map((w) => w.terminate(closing)));
  }

  /**
   * Hands queued jobs to idle workers: a worker's own queue (stream pulls) first; then the shared jobs in arrival
   * order (background jobs after all others), each to the idle worker its bag hashes to when that one is free (its
   * readers are cached there), else to the idle worker with the fewest open streams. A new stream always goes to the
   * latter, so concurrent streams of one bag spread over the cores instead of sharing a thread.
   */
  private pump(): void {
    if (this.closed) return;
    if (this.workers.length < this.size && this.waiting.length > 0)
      void this.fill().then(
        () => this.pump(),
        () => this.failQueue(),
      );
    const idle = () => this.workers.filter((w) => !w.current && !w.dead);
    for (const worker of idle()) {
      const own = this.pinned.get(worker)?.shift();
      if (own) this.start(worker, own);
    }
    for (let free = idle(); free.length > 0 && this.waiting.length > 0; free = idle()) {
      const first = this.waiting.findIndex((q) => !q.options.background);
      const queued = this.waiting.splice(Math.max(0, first), 1)[0]!;
      const bag = queued.options.bag;
      const preferred =
        bag && queued.job.k !== 'stream' ? this.workers[hash(bag.path) % this.workers.length] : undefined;
      const target =
        preferred && free.includes(preferred) ? preferred : free.reduce((a, b) => (b.streams < a.streams ? b : a));
      this.start(target, queued);
    }
  }

  private start(worker: PoolWorker, queued: Queued): void {
    queued.cleanup();
    const { job, options } = queued;
    let answered = false;
    let deadline: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const finish = () => {
      answered = true;
      clearTimeout(deadline);
      if (onAbort) options.signal?.removeEventListener('abort', onAbort);
      running.settle = undefined;
    };
    const running = worker.start(job, (error, value) => {
      if (answered) return;
      finish();
      if (error) queued.reject(error);
      else queued.resolve({ value, worker });
    });
    deadline = setTimeout(() => {
      finish();
      const bag = options.bag ?? options.suspect?.();
      queued.reject(timeout(bag ? { ...options, bag } : options));
      this.giveUp(worker, running.jid, bag);
    }, options.deadlineMs);
    if (options.signal) {
      onAbort = () => {
        finish();
        queued.reject(new BagError('ABORTED', 'the client went away'));
        worker.cancel(running.jid);
      };
      options.signal.addEventListener('abort', onAbort, { once: true });
    }
  }

  /**
   * Past the deadline: ask the worker to cancel the job, and terminate it when it does not answer within GRACE_MS
   * (stuck in a synchronous call); the bag whose job did that is quarantined. A worker that answers stays busy until
   * the job really ends.
   */
  private giveUp(worker: PoolWorker, jid: number, bag: ResolvedBag | undefined): void {
    const asked = performance.now();
    worker.cancel(jid);
    const check = setTimeout(() => {
      if (worker.dead || worker.lastHeard >= asked || worker.current?.jid !== jid) return;
      if (bag) {
        this.quarantine.set(bag.path, { size: bag.size, mtimeMs: bag.mtimeMs, until: Date.now() + QUARANTINE_MS });
        // Bounded: the oldest entries go first (each one cost a worker, so there are never many).
        while (this.quarantine.size > QUARANTINE_ENTRIES) this.quarantine.delete(this.quarantine.keys().next().value!);
      }
      this.remove(worker, lostWorker());
    }, GRACE_MS);
    (check as { unref?: () => void }).unref?.();
  }

  /** The refusal of a bag that hung a worker (until its file changes or the quarantine ends); undefined otherwise. */
  quarantined(bag: ResolvedBag): HttpError | undefined {
    const entry = this.quarantine.get(bag.path);
    if (!entry) return undefined;
    if (entry.size !== bag.size || entry.mtimeMs !== bag.mtimeMs || entry.until < Date.now()) {
      this.quarantine.delete(bag.path);
      return undefined;
    }
    return new HttpError(
      'TIMEOUT',
      `bag "${bag.id}" made a worker hang and is refused until the file changes (or for ${QUARANTINE_MS / 60_000} minutes)`,
    );
  }

  private queueOf(worker: PoolWorker): Queued[] {
    let queue = this.pinned.get(worker);
    if (!queue) this.pinned.set(worker, (queue = []));
    return queue;
  }

  /** Starts the missing workers, all at once (each one imports the backends: a few hundred ms). */
  private fill(): Promise<void> {
    this.spawning ??= (async () => {
      try {
        const missing = this.size - this.workers.length;
        const started = await Promise.allSettled(
          Array.from({ length: missing }, () =>
            PoolWorker.spawn(
              this.runtime!,
              this.init(),
              () => this.pump(),
              (w) => this.remove(w, lostWorker()),
              (extensions) => {
                for (const extension of extensions) this.unavailable.add(extension);
              },
            ),
          ),
        );
        for (const result of started) {
          if (result.status === 'rejected') continue;
          if (this.closed) await result.value.terminate();
          else this.workers.push(result.value);
        }
        const failure = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failure && this.workers.length === 0) {
          this.spawnFailure = failure.reason;
          throw failure.reason;
        }
      } finally {
        this.spawning = undefined;
      }
    })();
    return this.spawning;
  }

  /** No worker could be started: the jobs waiting fail (later ones run on the server's own thread). */
  private failQueue(): void {
    if (this.workers.length > 0) return;
    for (const queued of this.waiting.splice(0)) {
      queued.cleanup();
      queued.reject(lostWorker());
    }
  }

  private remove(worker: PoolWorker, error: Error): void {
    const at = this.workers.indexOf(worker);
    if (at >= 0) this.workers.splice(at, 1);
    for (const queued of this.pinned.get(worker) ?? []) {
      queued.cleanup();
      queued.reject(error);
    }
    this.pinned.delete(worker);
    void worker.terminate(error);
    this.pump();
  }
}

function remove<T>(list: T[], item: T): void {
  const at = list.indexOf(item);
  if (at >= 0) list.splice(at, 1);
}

function subject(options: RunOptions): string {
  return options.bag ? ` bag "${options.bag.id}"` : options.suspect ? ' bags for the listing' : ' the stream';
}

function seconds(options: RunOptions): number {
  return options.deadlineMs / 1000;
}

function timeout(options: RunOptions): HttpError {
  return new HttpError(
    'TIMEOUT',
    `${options.what}${subject(options)} took longer than ${seconds(options)} s; the server gave up on it`,
  );
}

/** FNV-1a: a stable spread of paths over workers. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
