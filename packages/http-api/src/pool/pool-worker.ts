import { spawnWorker, type WorkerLink, type WorkerRuntime } from '@vlink/bag';
import { HttpError } from '../http/errors.js';
import { dataToError, type FromWorker, type InitMessage, type Job, type ToWorker } from './protocol.js';

const ENTRIES = {
  node: new URL('./entry-node.js', import.meta.url),
  web: new URL('./entry-web.js', import.meta.url),
  label: 'bag',
};

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * One worker thread of the pool, from the server's side: posts jobs, matches answers to them, and remembers when it
 * last heard from the thread (a thread that answers nothing after a `cancel` is stuck). Messages wait until the
 * worker said `hello`, since a Web Worker drops messages that arrive before it listens.
 */
export class PoolWorker {
  /** ms (performance.now) of the last message from the thread. */
  lastHeard = 0;
  /** Streams open on this worker (they count towards its load). */
  streams = 0;
  dead = false;
  private readonly pending = new Map<number, Pending>();
  private readonly outbox: Array<[ToWorker, ArrayBuffer[] | undefined]> = [];
  private greeted = false;
  private nextJob = 1;
  private link: WorkerLink | undefined;

  private constructor(private readonly onFailure: (worker: PoolWorker, error: Error) => void) {}

  static async spawn(
    runtime: WorkerRuntime,
    init: InitMessage,
    onFailure: (worker: PoolWorker, error: Error) => void,
  ): Promise<PoolWorker> {
    const worker = new PoolWorker(onFailure);
    const link = await spawnWorker(runtime, ENTRIES);
    worker.link = link;
    link.onMessage((message) => worker.receive(message as FromWorker));
    link.onFailure((error) => worker.onFailure(worker, error));
    link.unref();
    worker.post(init);
    return worker;
  }

  get load(): number {
    return this.pending.size + this.streams;
  }

  /** Posts a job; `onPosted` gets its id (for `cancel`). Settles with the worker's answer. */
  call(job: Job, onPosted: (jid: number) => void): Promise<unknown> {
    if (this.dead) return Promise.reject(lostWorker());
    const jid = this.nextJob++;
    onPosted(jid);
    return new Promise((resolve, reject) => {
      this.pending.set(jid, { resolve, reject });
      this.link!.ref();
      this.post({ k: 'job', jid, job });
    });
  }

  /** Gives up on a job: its promise is no longer settled by the worker (the caller has already answered). */
  forget(jid: number): void {
    this.pending.delete(jid);
    if (this.pending.size === 0) this.link?.unref();
  }

  cancel(jid: number): void {
    if (!this.dead) this.post({ k: 'cancel', jid });
  }

  /** Ends the thread; every job still waiting fails with `error`. */
  async terminate(error: Error = lostWorker()): Promise<void> {
    if (this.dead) return;
    this.dead = true;
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
    await this.link?.exit().catch(() => undefined);
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
      case 'alive':
        return;
      case 'done':
      case 'failed': {
        const pending = this.pending.get(message.jid);
        this.forget(message.jid);
        if (!pending) return;
        if (message.k === 'done') pending.resolve(message.value);
        else pending.reject(dataToError(message.error));
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
