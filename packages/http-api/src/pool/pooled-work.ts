import type { Info, SchemaData } from '@vlink/bag';
import type { ResolvedBag } from '../store/resolve-id.js';
import type {
  BagFacts,
  BagWork,
  DensityRequest,
  PageRequest,
  ReportRequest,
  StreamRequest,
  TimingRequest,
} from '../work/bag-work.js';
import type { Deadlines } from '../work/limits.js';
import type { BagPool } from './bag-pool.js';
import type { PoolWorker } from './pool-worker.js';
import { dataToError, type FactsData, type Job, type PullResult } from './protocol.js';

/**
 * How long a facts job may run before it answers what it has (the next job goes on): a job of another client waits
 * at most about this long for a worker the listing holds.
 */
const FACTS_BUDGET_MS = 25;

const factsOf = (info: Info): BagFacts => ({ messageCount: info.messageCount, fileSize: info.fileSize });

/** Bytes of a stream the server holds ahead of the socket (the worker holds about as much again). */
const STREAM_BUFFER_BYTES = 1024 * 1024;

/** BagWork done by the pool's worker threads; the answers are the workers' own (JSON text, chunks). */
export class PooledBagWork implements BagWork {
  constructor(
    private readonly pool: BagPool,
    private readonly deadlines: Deadlines,
  ) {}

  async info(bag: ResolvedBag): Promise<Info> {
    return (await this.pool.run({ k: 'info', bag }, { bag, deadlineMs: this.deadlines.openMs, what: 'opening' }))
      .value as Info;
  }

  /**
   * Jobs of many bags: a worker opens them one after the other and answers once its time budget is spent; the rest
   * goes in the next job. One job per bag cost a round trip between threads each (the workers idle about half the
   * time while 20,000 small bags were listed); a job of many costs one.
   *
   * A bag that hangs its worker takes the whole job past its deadline. The worker writes the index of the bag it is
   * opening into `progress` (shared memory: it needs no message, so it tells even when the thread is stuck), so that
   * bag gets the job's error (`TIMEOUT`) and is quarantined by the pool as on any route, the bags read before it
   * (their answers went with the job) are asked again, and no other bag of the job is charged with it.
   */
  async facts(bags: readonly ResolvedBag[]): Promise<BagFacts[]> {
    const out = new Array<BagFacts>(bags.length);
    let rest: number[] = [];
    bags.forEach((bag, i) => {
      const refused = this.pool.quarantined(bag);
      if (refused) out[i] = { error: refused };
      else rest.push(i);
    });
    while (rest.length > 0) {
      const batch = rest;
      const at = typeof SharedArrayBuffer === 'function' ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
      at?.fill(-1);
      const on = () => (at ? Atomics.load(at, 0) : -1);
      // The bag the job was on when its deadline passed (read once: a slow worker may still move on meanwhile).
      let timedOutAt: number | undefined;
      const suspect = () => bags[batch[(timedOutAt = on())] ?? -1];
      const job = { k: 'facts' as const, bags: batch.map((i) => bags[i]!), budgetMs: FACTS_BUDGET_MS };
      try {
        const { value } = await this.pool.run(at ? { ...job, progress: at.buffer as SharedArrayBuffer } : job, {
          deadlineMs: this.deadlines.openMs,
          what: 'opening',
          suspect,
          background: true,
        });
        const answered = value as FactsData[];
        if (answered.length === 0) throw new Error('a facts job answered no bag');
        answered.forEach((facts, j) => {
          out[batch[j]!] = 'error' in facts ? { error: dataToError(facts.error) } : facts;
        });
        rest = batch.slice(answered.length);
      } catch (error) {
        if (!at) {
          // No shared memory in this runtime: each bag on its own, so one that hangs is found as on other routes.
          for (const i of batch) out[i] = await this.info(bags[i]!).then(factsOf, (e: Error) => ({ error: e }));
          break;
        }
        const failed = timedOutAt ?? on();
        if (failed < 0 || failed >= batch.length) {
          // No bag was started: the server is busy (no free worker within the deadline) or closing. Listed with
          // that error, which is not cached: the next listing tries again.
          for (const i of batch) out[i] = { error: error as Error };
          break;
        }
        out[batch[failed]!] = { error: error as Error };
        rest = [...batch.slice(0, failed), ...batch.slice(failed + 1)];
      }
    }
    return out;
  }

  async schemas(bag: ResolvedBag): Promise<SchemaData[]> {
    const options = { bag, deadlineMs: this.deadlines.openMs, what: 'reading the schemas of' };
    return (await this.pool.run({ k: 'schemas', bag }, options)).value as SchemaData[];
  }

  async attachment(bag: ResolvedBag, index: number): Promise<Uint8Array> {
    const options = { bag, deadlineMs: this.deadlines.requestMs, what: 'reading an attachment of' };
    return new Uint8Array((await this.pool.run({ k: 'attachment', bag, index }, options)).value as ArrayBuffer);
  }

  timing(bag: ResolvedBag, request: TimingRequest, signal?: AbortSignal): Promise<string> {
    return this.answerText({ k: 'timing', bag, request }, 'timing of', signal);
  }

  report(bag: ResolvedBag, request: ReportRequest, signal?: AbortSignal): Promise<string> {
    return this.answerText({ k: 'report', bag, request }, 'report of', signal);
  }

  density(bag: ResolvedBag, request: DensityRequest, signal?: AbortSignal): Promise<string> {
    return this.answerText({ k: 'density', bag, request }, 'density of', signal);
  }

  page(bag: ResolvedBag, request: PageRequest, signal?: AbortSignal): Promise<string> {
    return this.answerText({ k: 'page', bag, request }, 'reading', signal);
  }

  /** A cancellable job under the request deadline whose answer is the worker's JSON text. */
  private async answerText(job: Job & { bag: ResolvedBag }, what: string, signal?: AbortSignal): Promise<string> {
    const options = { bag: job.bag, deadlineMs: this.deadlines.requestMs, what, ...(signal ? { signal } : {}) };
    return (await this.pool.run(job, options)).value as string;
  }

  /**
   * Opens the stream in a worker and pulls it chunk by chunk, each pull with the request deadline. Chunks read before
   * a failure are delivered before the stream errors (erroring a stream discards its queue, so the error waits until
   * the consumer has drained it).
   */
  async stream(bag: ResolvedBag, request: StreamRequest): Promise<ReadableStream<Uint8Array>> {
    const opened = await this.pool.run(
      { k: 'stream', bag, request },
      { bag, deadlineMs: this.deadlines.openMs, what: 'opening' },
    );
    const sid = opened.value as number;
    const worker: PoolWorker = opened.worker;
    worker.streams++;
    let open = true;
    const release = () => {
      if (!open) return;
      open = false;
      worker.streams--;
    };
    let failure: { error: unknown } | undefined;
    const drained = (c: ReadableStreamDefaultController<Uint8Array>) => (c.desiredSize ?? 0) >= STREAM_BUFFER_BYTES;
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          if (failure) {
            if (drained(controller)) controller.error(failure.error);
            return;
          }
          try {
            const { value } = await this.pool.run(
              { k: 'pull', sid },
              { worker, deadlineMs: this.deadlines.requestMs, what: 'reading' },
            );
            const result = value as PullResult;
            for (const chunk of result.chunks) controller.enqueue(new Uint8Array(chunk));
            if (result.error) throw dataToError(result.error);
            if (result.done) {
              release();
              controller.close();
            }
          } catch (error) {
            if (open) void this.end(worker, sid);
            release();
            failure = { error };
            if (drained(controller)) controller.error(error);
          }
        },
        cancel: async () => {
          if (open) await this.end(worker, sid);
          release();
        },
      },
      { highWaterMark: STREAM_BUFFER_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async end(worker: PoolWorker, sid: number): Promise<void> {
    await this.pool
      .run({ k: 'end', sid }, { worker, deadlineMs: this.deadlines.openMs, what: 'closing' })
      .catch(() => undefined);
  }
}
