import { spawnWorker, type WorkerLink, type WorkerRuntime } from '@vlink/bag';
import { type PrivateTempDir, reservedTempDir } from '@vlink/bag-core/internal';
import { HttpError } from '../http/errors.js';
import { dataToError, type FromWorker, type InitMessage, type Job, type ToWorker } from './protocol.js';

/** Longest a worker may take to start and load its backends before it counts as failed. */
const STARTUP_MS = 60_000;

const ENTRIES = {
  node: new URL('./entry-node.js', import.meta.url),
  web: new URL('./entry-web.js', import.meta.url),
  label: 'bag',
};

/** The job a worker is running, as the pool tracks it. */
export interface Running {
  jid: number;
  job: Job;
  /** Settles the caller's promise; undefined once the caller was answered otherwise (deadline, client gone). */
  settle: ((error: Error | undefined, value?: unknown) => void) | undefined;
}

/**
 * One worker thread of the pool, from the server's side. It runs one job at a time (the pool hands it the next one
 * when it reports the current one done), so when the thread gets stuck the job that did it is known. Messages wait
 * until the worker said `hello`, since a Web Worker drops messages that arrive before it listens.
 */
export class PoolWorker {
  /** ms (performance.now) of the last message from the thread. */
  lastHeard = 0;
  /** Streams open on this worker: their pulls must run here. */
  streams = 0;
  dead = false;
  current: Running | undefined;
  private readonly outbox: Array<[ToWorker, ArrayBuffer[] | undefined]> = [];
  private greeted = false;
  private isReady = false;
  private whenReady: () => void = () => undefined;
  private nextJob = 1;
  private link: WorkerLink | undefined;
  /** The worker's private copies (`InitMessage.scratch`, made by the worker when it needs it), removed once it has ended. */
  private readonly scratch: PrivateTempDir = reservedTempDir('vlink-bag-worker-');

  private constructor(
    private readonly onIdle: (worker: PoolWorker) => void,
    private readonly onFailure: (worker: PoolWorker, error: Error) => void,
    private readonly onUnavailable: (extensions: string[]) => void,
  ) {}

  /**
   * Starts a worker and resolves once it has loaded its backends (`ready`): starting a thread and importing modules
   * takes a few hundred ms, seconds on a busy machine, and must not count against the deadline of its first job.
   */
  static async spawn(
    runtime: WorkerRuntime,
    init: InitMessage,
    onIdle: (worker: PoolWorker) => void,
    onFailure: (worker: PoolWorker, error: Error) => void,
    onUnavailable: (extensions: string[]) => void = () => undefined,
  ): Promise<PoolWorker> {
    let started!: (error?: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      started = (error) => (error ? reject(error) : resolve());
    });
    const worker = new PoolWorker(
      onIdle,
      (w, error) => (w.isReady ? onFailure(w, error) : started(error)),
      (extensions) => {
        onUnavailable(extensions);
      },
    );
    worker.whenReady = () => started();
    let link: WorkerLink;
    try {
      link = await spawnWorker(runtime, ENTRIES);
    } catch (error) {
      worker.scratch.remove();
      throw error;
    }
    worker.link = link;
    link.onMessage((message) => worker.receive(message as FromWorker));
    link.onFailure((error) => worker.onFailure(worker, error));
    worker.post({ ...init, scratch: worker.scratch.path });
    const timer = setTimeout(
      () => started(new Error(`a bag worker did not start within ${STARTUP_MS / 1000} s`)),
      STARTUP_MS,
    );
    try {
      await ready;
    } catch (error) {
      await worker.terminate();
      throw error;
    } finally {
      clearTimeout(timer);
    }
    worker.isReady = true;
    link.unref();
    return worker;
  }

  /** Starts a job; the worker must be idle. */
  start(job: Job, settle: Running['settle']): Running {
    const running: Running = { jid: this.nextJob++, job, settle };
    this.current = running;
    this.link!.ref();
    this.post({ k: 'job', jid: running.jid, job });
    return running;
  }

  cancel(jid: number): void {
    if (!this.dead) this.post({ k: 'cancel', jid });
  }

  /** Ends the thread; the running job (if its caller still waits) fails with `error`. */
  async terminate(error: Error = lostWorker()): Promise<void> {
    if (this.dead) return;
    this.dead = true;
    const settle = this.current?.settle;
    this.current = undefined;
    settle?.(error);
    await this.link?.exit().catch(() => undefined);
    this.scratch.remove();
  }

  private post(message: ToWorker, transfer?: ArrayBuffer[]): void {
    if (!this.greeted) this.outbox.push([message, transfer]);
    else this.link!.post(message, transfer);
  }

  private receive(message: FromWorker): void {
    this.lastHeard = performance.now();
    switch (message.k) {
      case 'hello':
        this.greeted = true;
        for (const [queued, transfer] of this.outbox.splice(0)) this.link!.post(queued, transfer);
        return;
      case 'ready':
        if (message.unavailable.length > 0) this.onUnavailable(message.unavailable);
        this.whenReady();
        return;
      case 'alive':
        return;
      case 'done':
      case 'failed': {
        const running = this.current;
        if (!running || running.jid !== message.jid) return;
        this.current = undefined;
        this.link!.unref();
        if (message.k === 'done') running.settle?.(undefined, message.value);
        else running.settle?.(dataToError(message.error));
        if (!this.dead) this.onIdle(this);
      }
    }
  }
}

export function lostWorker(): HttpError {
  return new HttpError(
    'UNAVAILABLE',
    'the bag worker serving this request was stopped (a request on it ran past its deadline, or it failed); retry',
  );
}
