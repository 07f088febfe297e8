import { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import { afterCurrentTask, scheduleSoon, unrefTimer } from '../util/schedule.js';
import type { WorkerRuntime } from '../runtime/worker-link.js';
import { spareSlabs, type WriterWorker } from '../writer-worker/idle-writers.js';
import { SharedProgress } from '../writer-worker/progress.js';
import { dataToError, type AckMessage, type FromWorker } from '../writer-worker/protocol.js';
import { dropErrorFor } from './ack-drops.js';
import { DurableTable } from './durable-table.js';
import type { Durable, EngineHost, WriteEngine } from './engine.js';
import { BatchBuilder, withoutFrames } from './frame-batch.js';
import { InflightGauge, lastRate, rememberRate } from './inflight-gauge.js';
import { SlabPool } from './slab-pool.js';
import { SchemaForwarder } from './schema-forwarder.js';
import { queueFullError, WorkerQueueRoom, type SourceQueues } from './source-queues.js';
import { openInWorker, openMessage, takeWriterWorker, type WorkerEngineOptions } from './worker-handshake.js';
import { UrlEntries, type UrlEntry } from './frame-admission.js';
import type { DropReason } from './writer-stats.js';

export type { WorkerEngineOptions } from './worker-handshake.js';

const MiB = 1024 * 1024;
/**
 * Batches handed over per task stop at this many unacknowledged ones; the next ack sends what gathered meanwhile.
 * Each batch carries some slack (a partly used arena, its frame table) that the queue limits, which count payload
 * bytes, do not see: a slow disk and a producer that pushes one frame per task must not pile up thousands of them.
 */
const MAX_SMALL_INFLIGHT = 8;

/**
 * The producer half of an async writer: checks the queue limits, batches frames (see `BatchBuilder`), forwards the
 * schemas the worker will need, and turns the worker's acks back into counters, callbacks and durable results.
 * "Queued" means accepted and not yet finished with by the worker, so the limits bound what is in flight across both
 * threads, which is what bounds memory.
 */
export class WorkerEngine implements WriteEngine {
  readonly mode = 'worker' as const;
  private readonly batch: BatchBuilder;
  private readonly pool: SlabPool;
  /** A batch is posted inline once it holds this many frames or bytes, else at the end of the current task. */
  private readonly batchFrames: number;
  private readonly batchBytes: number;
  /** Per url: its interned id, source and (ser, family) pair (see frame-admission.ts). */
  private readonly urls: UrlEntries;
  /** Frames and bytes in flight across both threads, against the queue limits (see inflight-gauge.ts). */
  private readonly gauge: InflightGauge;
  private readonly transfer: boolean;
  private readonly sources: SourceQueues;
  private readonly room: WorkerQueueRoom;
  private readonly forwarder: SchemaForwarder;
  private readonly durables = new DurableTable();
  private seq = 0;
  /** Batches posted and not yet acknowledged. */
  private inflight = 0;
  private flushScheduled = false;
  private quitting = false;
  private gone = false;
  private failure: BagError | undefined;
  private file = '';
  private opened: { resolve(): void; reject(error: unknown): void } | undefined;
  private readonly flushSoon = () => {
    this.flushScheduled = false;
    if (this.inflight < MAX_SMALL_INFLIGHT) this.flush();
  };

  private constructor(
    private readonly link: WriterWorker,
    private readonly host: EngineHost,
    private readonly options: WorkerEngineOptions,
  ) {
    const { maxTaskDepth, maxMemorySize } = options.config;
    this.gauge = new InflightGauge(
      SharedProgress.create(),
      maxTaskDepth,
      maxMemorySize,
      options.maxQueueTimeMs,
      lastRate(options.backend.name),
    );
    this.transfer = options.transfer;
    this.sources = options.sources;
    // An eighth of the queue limits: enough batches in flight to keep both threads busy during a synchronous burst,
    // few enough hand-overs that their cost stays out of push()'s p99. With tiny limits (≤ 64 frames, ≤ 1 MiB) a
    // batch is handed over once per task or when the queue is full, which keeps their refusals deterministic.
    this.batchFrames = clamp(maxTaskDepth >> 3, 64, 4096);
    this.batchBytes = clamp(Math.floor(maxMemorySize / 8), MiB, 64 * MiB);
    this.pool = new SlabPool(clamp(Math.floor(maxMemorySize / 8), MiB, 32 * MiB), () => this.reclaim(), spareSlabs);
    this.batch = new BatchBuilder(this.pool);
    this.room = new WorkerQueueRoom(this.batch, this.gauge, this.sources);
    this.forwarder = new SchemaForwarder(
      options.schemas,
      (schema) => this.batch.addSchema(schema),
      (error) => host.warn(error),
    );
    this.urls = new UrlEntries(this.forwarder, this.sources, (value) => this.batch.addString(value));
  }

  /** Starts the worker and opens the file there; rejects with the backend's error if the file cannot be opened. */
  static async open(host: EngineHost, options: WorkerEngineOptions): Promise<WorkerEngine> {
    const link = await takeWriterWorker(options);
    const engine = new WorkerEngine(link, host, options);
    const answered = new Promise<void>((resolve, reject) => (engine.opened = { resolve, reject }));
    link.onMessage((message) => engine.receive(message as FromWorker));
    link.onFailure((error) => engine.crashed(error));
    await openInWorker(link, openMessage(options, engine.gauge.progress), answered);
    return engine;
  }

  get runtime(): WorkerRuntime {
    return this.link.runtime;
  }

  queuedFrames(): number {
    return this.room.queuedFrames();
  }

  queuedBytes(): number {
    return this.room.queuedBytes();
  }

  start(): void {}

  submit(frame: Frame, durable?: Durable, lazy = false): boolean {
    if (this.gone) return this.refuseGone(frame, durable);
    const entry = this.urls.of(frame);
    if (entry === undefined) return this.refuse('invalidFrame', this.urls.refusal!, durable, frame.url);
    return this.enqueue(frame, entry, durable, lazy);
  }

  submitBelowMark(frame: Frame): boolean | undefined {
    if (this.gone) return this.refuseGone(frame, undefined);
    const entry = this.urls.of(frame);
    if (entry === undefined) return this.refuse('invalidFrame', this.urls.refusal!, undefined, frame.url);
    const size = frame.data.length;
    // One check for the mark and the limits where the cheap figures answer both (issue 20: the producer of an `await
    // write()` loop of 64 B frames used about 10 % less CPU than with the two checks, Node and Bun, per thread).
    if (this.room.belowMarkNow(entry.source, size)) return this.add(frame, entry, size, undefined, true);
    if (!this.room.hasRoomIn(entry.source, size)) return undefined;
    return this.enqueue(frame, entry, undefined, true);
  }

  /** Checks the queue limits and adds the frame to the batch being built; false when refused (reported). */
  private enqueue(frame: Frame, entry: UrlEntry, durable: Durable | undefined, lazy: boolean): boolean {
    const size = frame.data.length;
    // Cheap check against what the last ack or read said; only near a limit ask the shared counters for the live figure.
    if (!this.room.withinLimits(entry.source, size)) {
      this.reclaim();
      const refusal = this.sources.admit(entry.source, size, this.room.live());
      if (refusal) return this.refuse(refusal.reason, queueFullError(refusal, frame.url), durable, frame.url);
    }
    return this.add(frame, entry, size, durable, lazy);
  }

  /** Adds an admitted frame to the batch being built, and hands the batch over when it is full or the task ends. */
  private add(frame: Frame, entry: UrlEntry, size: number, durable: Durable | undefined, lazy: boolean): true {
    const index = this.batch.add(
      frame.timestamp,
      entry.id,
      entry.ser,
      frame.schemaType,
      frame.actionType,
      frame.data,
      this.transfer,
      frame.publishTime,
    );
    this.sources.add(entry.source, size, true);
    if (durable) this.batch.markDurable(index, this.durables.hold(durable, frame.timestamp));
    if (this.batch.count >= this.batchFrames || this.batch.bytes >= this.batchBytes) this.flush();
    else if (!this.flushScheduled && lazy) {
      // An `await write()` loop runs from microtask to microtask: a promise reaction would hand over one frame per
      // batch. It fills batches instead, handed over once the loop waits or the event loop turns.
      this.flushScheduled = true;
      scheduleSoon(this.flushSoon);
    } else if (!this.flushScheduled) {
      // Handed over when this task's pushes are done. Arming a promise reaction instead of setImmediate takes µs off
      // the first push() of every task (what a paced producer pays: bench/writer.bench.mjs pushWarmth). A producer
      // that pushes one frame per task then posts one batch per frame, which MAX_SMALL_INFLIGHT caps while the
      // worker lags; the rest gather until its next ack.
      this.flushScheduled = true;
      afterCurrentTask(this.flushSoon);
    }
    return true;
  }

  hasRoom(size: number, url?: string): boolean {
    return url === undefined ? this.room.hasRoom(size) : this.room.hasRoomIn(this.sources.of(url), size);
  }

  /** The schema callback changed: pairs it could not answer before are asked again. */
  schemasChanged(): void {
    this.forwarder.retryMisses();
    // Every url passes the forwarder again at its next push, so the pairs it could not answer are asked again.
    this.urls.recheckSchemas();
  }

  writeSchema(schema: SchemaData): void {
    if (this.gone || this.quitting) return;
    this.flush();
    this.link.post({ k: 'schema', schema });
  }

  setUrlLoss(url: string, loss: number): void {
    if (this.gone || this.quitting) return;
    this.flush();
    this.link.post({ k: 'loss', url, loss });
  }

  currentFile(): string {
    return this.file;
  }

  private countersTimer: ReturnType<typeof setTimeout> | undefined;

  countersChanged(): void {
    if (this.countersTimer !== undefined || this.gone) return;
    // At most one table a second; the worker stores it at its next tick.
    this.countersTimer = setTimeout(() => {
      this.countersTimer = undefined;
      if (!this.gone && !this.quitting) this.link.post({ k: 'counters', counters: this.host.producerCounters() });
    }, 1000);
    unrefTimer(this.countersTimer);
  }

  quit(): void {
    if (this.quitting) return;
    this.quitting = true;
    if (this.gone) {
      this.host.finished();
      return;
    }
    this.flush();
    this.link.ref();
    this.link.post({ k: 'quit', counters: this.host.producerCounters() });
  }

  // ---------------------------------------------------------------------------------------------------------------

  private flush(): void {
    if (!this.batch.pending || this.gone) return;
    const [message, transfer] = this.batch.take(++this.seq);
    this.gauge.pushed(message.count, message.bytes);
    this.sources.seal(message.seq);
    if (this.inflight++ === 0) this.link.ref();
    try {
      this.link.post(message, transfer);
      const ids = [message.seq];
      for (const ref of [message.meta, ...message.chunks]) if (typeof ref === 'number') ids.push(ref);
      if (ids.length > 1) this.pool.lend(ids);
    } catch (error) {
      // Only a caller that detached a buffer it lent us with `transferPayloads` gets here.
      this.link.post(withoutFrames(message));
      for (const ref of [message.meta, ...message.chunks]) if (typeof ref === 'number') this.pool.release(ref);
      this.sources.discard(message.seq);
      this.gauge.discarded(message.count, message.bytes);
      const bagError = BagError.wrap(error, 'INVALID_ARGUMENT', 'a batch could not be handed to the writer worker', {
        file: this.options.path,
      });
      if (message.count > 0) this.host.dropped('storageError', bagError, true, message.count);
      for (let j = 1; j < message.durable.length; j += 2) this.durables.settle(message.durable[j]!, bagError);
    }
  }

  private receive(message: FromWorker): void {
    switch (message.k) {
      case 'ack':
        this.onAck(message);
        return;
      case 'opened':
        this.file = message.currentFile;
        this.opened?.resolve();
        return;
      case 'openFailed':
        this.gone = true;
        this.opened?.reject(dataToError(message.error));
        return;
      case 'split':
        if (!message.before) this.file = message.file;
        this.host.split(message.index, message.file, message.before);
        return;
      case 'error':
        if (message.fatal) this.reportFatal(dataToError(message.error));
        else this.host.warn(dataToError(message.error));
        return;
      case 'closed':
        if (message.error) this.reportFatal(dataToError(message.error));
        this.gone = true;
        this.file = '';
        rememberRate(this.options.backend.name, this.gauge.measuredRatePerMs);
        // The worker takes messages in order: it wrote every batch before it closed the file, and holds no slab now.
        if (!message.error && !this.failure) this.pool.retire();
        // A worker that closed its file cleanly serves the next recording (see idle-writers.ts).
        void (message.error || this.failure ? this.link.exit() : this.link.release()).then(() => this.host.finished());
        return;
    }
  }

  private onAck(ack: AckMessage): void {
    this.inflight -= ack.batches;
    this.gauge.done(ack.count, ack.bytes);
    this.releaseSlabs(ack.seq);
    if (ack.currentFile !== undefined) this.file = ack.currentFile;
    if (ack.written > 0) {
      this.host.written.frames += ack.written;
      this.host.written.bytes += ack.writtenBytes;
    }
    const fatal = ack.fatal ? this.reportFatal(dataToError(ack.fatal)) : undefined;
    const errors = ack.errors.map(dataToError);
    this.gauge.measure(ack.count, ack.busyMs);
    // Rejections worth a callback (sampled), then every drop counted by url and cause.
    for (const error of errors) this.host.warn(error);
    for (const [url, reason, count] of ack.droppedUrls) {
      const error = dropErrorFor(reason, url, errors, fatal ?? this.failure, this.options.path);
      this.host.dropped(reason, error, false, count, url, true);
    }
    for (let i = 0; i < ack.commits; i++) this.host.committed();
    for (const id of ack.durableOk) this.durables.settle(id);
    for (const { id, error } of ack.durableFailed) this.durables.settle(id, dataToError(error));
    // A batch that waited for room (see MAX_SMALL_INFLIGHT) goes now.
    if (this.batch.pending && !this.flushScheduled) {
      this.flushScheduled = true;
      scheduleSoon(this.flushSoon);
    }
    if (this.inflight === 0 && !this.quitting) this.link.unref();
    this.host.room();
  }

  /** Before a new slab is allocated: reuse those of the batches the worker has finished (shared memory says which). */
  private reclaim(): void {
    if (this.gauge.progress) this.releaseSlabs(this.gauge.progress.batches());
  }

  /** The worker is done with every batch up to `seq`: their slabs go back to the pool, their frames leave the sources. */
  private releaseSlabs(seq: number): void {
    this.sources.doneUpTo(seq);
    this.pool.returnUpTo(seq);
  }

  /** Reports a storage failure once; later acks of the same failure only settle their frames. */
  private reportFatal(error: BagError): BagError {
    if (!this.failure) {
      this.failure = error;
      this.host.failed(error);
    }
    return error;
  }

  /** The worker died (uncaught error, failed import, killed): everything in flight is lost and counted. */
  private crashed(cause: Error): void {
    if (this.gone) return;
    this.gone = true;
    const error = new BagError(
      'INTERNAL',
      `writer worker failed: ${cause.message}; pass { worker: false } to write on this thread`,
      { file: this.options.path, cause },
    );
    if (this.opened) this.opened.reject(error);
    // The batch being built never goes: its frames are lost with those in flight.
    if (this.batch.pending) {
      const [unsent] = this.batch.take(++this.seq);
      this.gauge.pushed(unsent.count, unsent.bytes);
      this.sources.seal(unsent.seq);
    }
    this.sources.doneUpTo(Number.POSITIVE_INFINITY);
    const lost = this.gauge.abandon();
    this.reportFatal(error);
    if (lost > 0) this.host.dropped('storageError', error, false, lost);
    this.durables.failAll(error);
    // The file is as closed as it will get; a pending quit() is over, a later one finishes at once.
    void this.link.exit().then(() => {
      if (this.quitting) this.host.finished();
    });
  }

  private refuseGone(frame: Frame, durable: Durable | undefined): false {
    const error = new BagError('IO_ERROR', 'writer worker is gone', { file: this.options.path });
    return this.refuse('storageError', error, durable, frame.url);
  }

  private refuse(reason: DropReason, error: BagError, durable: Durable | undefined, url?: string): false {
    this.host.dropped(reason, error, false, 1, url);
    durable?.reject(error);
    return false;
  }
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
