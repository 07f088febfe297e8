import type { Backend, RecordingContext } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Frame, SchemaData } from '../model/frame.js';
import type { SchemaType } from '../model/schema-type.js';
import type { DropReason } from '../writer/writer-stats.js';
import { scheduleSoon } from '../util/schedule.js';
import { schemaKey } from '../model/url-identity.js';
import type { ParentLink } from '../runtime/worker-link.js';
import { BatchPayloads } from '../writer/frame-batch.js';
import { SharedProgress } from './progress.js';
import { mergeCounterTables, DropCounters } from '../writer/drop-counters.js';
import { StorageLoop } from '../writer/storage-loop.js';
import {
  errorToData,
  FIELDS,
  F_ACTION,
  F_CHUNK,
  F_LENGTH,
  F_PUBLISH,
  F_OFFSET,
  F_SCHEMA,
  F_SER,
  F_TS,
  F_URL,
  type AckMessage,
  type BatchMessage,
  type ChunkRef,
  type ErrorData,
  type FromWorker,
  type OpenMessage,
  type ToWorker,
} from './protocol.js';

/** Rejections forwarded per ack; a backend at its row limit rejects every frame and the counts say how many. */
const MAX_ERRORS_PER_ACK = 16;
const EMPTY = new Uint8Array(0);
/** The longest an ack waits to be coalesced with later batches. */
const ACK_DELAY_MS = 2;

/**
 * The worker half of an async `BagWriter`: owns the BackendWriter, writes batches in the order they arrive through a
 * `StorageLoop` (the same rules of drops, commits for durable pushes and the once-a-second `tick()` as a same-thread
 * writer; VLink's commit-check timer runs on its writer thread too), and reports every outcome back in coalesced
 * acks. It never decides policy: queue limits, timestamps and plugins stay on the producer.
 */
export function serveWriter(link: ParentLink): void {
  // One recording after another: a worker whose file closed cleanly is kept for the next (idle-writers.ts), and each
  // `open` starts a session with state of its own. Messages of one session never interleave with the next's: the
  // producer sends `open` only after `closed`.
  let session: ((message: ToWorker) => void) | undefined;
  link.onMessage((message) => {
    if ((message as ToWorker).k === 'open' || !session) session = writerSession(link);
    session(message as ToWorker);
  });
}

function writerSession(link: ParentLink): (message: ToWorker) => void {
  let storage: StorageLoop | undefined;
  let path = '';
  let progress: SharedProgress | undefined;
  let lastFile = '';
  const strings: string[] = [];
  const slabs = new Map<number, SharedArrayBuffer>();
  const schemas = new Map<string, SchemaData>();
  const payloads = new BatchPayloads();
  /** Frames this side could not store, per url and cause: stored at close with the producer's. */
  const counters = new DropCounters();
  /** The producer's latest table (the quit message brings the last one). */
  let producerTable: Record<string, Record<string, number>> = {};
  const send = (message: FromWorker) => link.post(message);
  const sendFatal = (error: BagError) => send({ k: 'error', error: errorToData(error), fatal: true });

  async function open(message: OpenMessage): Promise<void> {
    path = message.path;
    progress = message.progress ? new SharedProgress(message.progress) : undefined;
    try {
      const backend = await importBackend(message.backendModule, message.backendName);
      const context: RecordingContext = {
        ...message.context,
        resolveSchema: (name: string, type: SchemaType) => schemas.get(schemaKey(name, type)),
        onSplit: (index, file, before) => send({ k: 'split', index, file, before }),
        writerThread: true,
      };
      storage = new StorageLoop(await backend.createWriter(message.path, message.config, context), {
        path,
        counters: () => mergeCounterTables(producerTable, counters.table()),
        onTimerFailure: sendFatal,
      });
    } catch (error) {
      send({
        k: 'openFailed',
        error: errorToData(BagError.wrap(error, 'IO_ERROR', 'cannot open bag', { file: path })),
      });
      link.close();
      return;
    }
    lastFile = storage.currentFile();
    send({ k: 'opened', currentFile: lastFile });
    storage.startTicking({ unref: false });
  }

  // Acks are coalesced: batches handled in one turn share one message (a postMessage costs tens of µs on a busy
  // machine). Anything a caller waits for (a durable push, a failure) is acknowledged at once, and so is an ack that
  // has waited 2 ms: a worker that is behind may not reach the end of its turn for a long time, and its acks are what
  // free the producer's slabs.
  let pending: AckMessage | undefined;
  let pendingSince = 0;
  let ackScheduled = false;
  const flushAck = () => {
    ackScheduled = false;
    if (!pending) return;
    const ack = pending;
    pending = undefined;
    if (storage) {
      const file = storage.currentFile();
      if (file !== lastFile) ack.currentFile = lastFile = file;
    }
    link.post(ack);
  };
  const newAck = (): AckMessage => ({
    k: 'ack',
    batches: 0,
    count: 0,
    bytes: 0,
    written: 0,
    writtenBytes: 0,
    dropped: {},
    droppedUrls: [],
    busyMs: 0,
    errors: [],
    commits: 0,
    durableOk: [],
    durableFailed: [],
    seq: 0,
  });

  function writeBatch(batch: BatchMessage): void {
    const loop = storage!;
    for (const [id, slab] of batch.slabs) slabs.set(id, slab);
    for (const id of batch.forget) slabs.delete(id);
    for (const value of batch.strings) strings.push(value);
    for (const schema of batch.schemas) schemas.set(schemaKey(schema.name, schema.schemaType), schema);
    if (!pending) {
      pending = newAck();
      pendingSince = performance.now();
    }
    const ack = pending;
    const wasFailed = loop.failed;
    const started = performance.now();
    const dropsByUrl = new Map<string, number>();
    const countDrop = (url: string, reason: DropReason, n = 1) => {
      counters.add(url, reason, n);
      loop.countersChanged();
      const key = `${reason}\x1f${url}`;
      dropsByUrl.set(key, (dropsByUrl.get(key) ?? 0) + n);
    };
    // Why a durable frame was not stored, by frame index (other rejections are only counted and sampled).
    const durableIndex = batch.durable.length > 0 ? new Set(batch.durable.filter((_, j) => j % 2 === 0)) : undefined;
    const durableErrors = new Map<number, ErrorData>();
    const bytesOf = (ref: ChunkRef) => (typeof ref === 'number' ? slabs.get(ref)! : ref);
    const m = new Float64Array(bytesOf(batch.meta));
    payloads.begin(batch.chunks.map(bytesOf));
    let stored = 0;
    let storedBytes = 0;
    let rejected = 0;
    // One frame object for the whole batch: like `data`, a backend may not keep it after `write` returns. Every field
    // it will have from the start (`publishTime` too): added at the first frame, it changed the object's shape in
    // each batch, and the loop cost about 10 ns more per frame (Node, the loop alone against a no-op storage).
    const frame: Frame = {
      timestamp: 0,
      url: '',
      serType: '',
      schemaType: 0,
      actionType: 0,
      data: EMPTY,
      publishTime: undefined,
    };
    // A writer that failed before this batch drops it at the first frame (`write` says storageError, the loop ends).
    for (let i = 0; i < batch.count; i++) {
      const base = i * FIELDS;
      const length = m[base + F_LENGTH]!;
      const offset = m[base + F_OFFSET]!;
      // The url's interned id is unique to it for the whole recording: backends index per-url state by it.
      const urlId = m[base + F_URL]! | 0;
      frame.timestamp = m[base + F_TS]!;
      frame.url = strings[urlId]!;
      frame.serType = strings[m[base + F_SER]! | 0]!;
      frame.schemaType = m[base + F_SCHEMA]!;
      frame.actionType = m[base + F_ACTION]!;
      frame.data = payloads.view(m[base + F_CHUNK]! | 0, offset, length);
      const publish = m[base + F_PUBLISH]!;
      frame.publishTime = Number.isNaN(publish) ? undefined : publish;
      if (loop.write(frame, urlId)) {
        stored++;
        storedBytes += length;
        continue;
      }
      const reason = loop.dropReason;
      if (reason === 'storageError') break;
      rejected++;
      ack.dropped[reason] = (ack.dropped[reason] ?? 0) + 1;
      countDrop(frame.url, reason);
      if (ack.errors.length < MAX_ERRORS_PER_ACK || durableIndex?.has(i)) {
        const data = errorToData(loop.dropError!);
        if (ack.errors.length < MAX_ERRORS_PER_ACK) ack.errors.push(data);
        if (durableIndex?.has(i)) durableErrors.set(i, data);
      }
    }
    ack.written += stored;
    ack.writtenBytes += storedBytes;
    // The frame that hit a storage error and every frame after it are dropped, as the same-thread writer does.
    const lost = batch.count - stored - rejected;
    if (lost > 0) {
      ack.dropped.storageError = (ack.dropped.storageError ?? 0) + lost;
      // The frame that failed and those after it, by url.
      for (let i = batch.count - lost; i < batch.count; i++)
        countDrop(strings[m[i * FIELDS + F_URL]! | 0]!, 'storageError');
    }
    for (const [key, n] of dropsByUrl) {
      const cut = key.indexOf('\x1f');
      ack.droppedUrls.push([key.slice(cut + 1), key.slice(0, cut) as DropReason, n]);
    }
    ack.busyMs += performance.now() - started;
    let committed = false;
    if (batch.commit && loop.failed === undefined && loop.commit() === undefined) {
      committed = true;
      ack.commits++;
    }
    const fatal = loop.failed ? errorToData(loop.failed) : undefined;
    if (fatal && !wasFailed) ack.fatal = fatal;
    for (let j = 0; j < batch.durable.length; j += 2) {
      const index = batch.durable[j]!;
      const id = batch.durable[j + 1]!;
      const error =
        durableErrors.get(index) ??
        (committed
          ? undefined
          : (fatal ?? errorToData(new BagError('IO_ERROR', 'frame not committed', { file: path }))));
      if (error) ack.durableFailed.push({ id, error });
      else ack.durableOk.push(id);
    }
    ack.batches++;
    ack.count += batch.count;
    ack.bytes += batch.bytes;
    // From here on the batch's shared slabs are the producer's again (it reuses them for later batches).
    ack.seq = batch.seq;
    progress?.add(batch.count, batch.bytes, batch.seq);
    if (batch.durable.length > 0 || ack.fatal || performance.now() - pendingSince > ACK_DELAY_MS) flushAck();
    else if (!ackScheduled) {
      ackScheduled = true;
      scheduleSoon(flushAck);
    }
  }

  function close(producerCounters: Record<string, Record<string, number>> | undefined): void {
    flushAck();
    producerTable = producerCounters ?? {};
    const failure = storage?.close();
    const error = failure ? errorToData(failure) : undefined;
    send(error ? { k: 'closed', error } : { k: 'closed' });
    // A clean close leaves the worker to the producer, which reuses or ends it; a failed one ends here.
    if (error) link.close();
  }

  function handle(message: ToWorker): void | Promise<void> {
    switch (message.k) {
      case 'open':
        return open(message);
      case 'batch':
        return writeBatch(message);
      case 'schema':
        schemas.set(schemaKey(message.schema.name, message.schema.schemaType), message.schema);
        if (storage && storage.failed === undefined) {
          const rejected = storage.writeSchema(message.schema);
          if (rejected) send({ k: 'error', error: errorToData(rejected), fatal: false });
        }
        return;
      case 'loss':
        storage?.writer.setUrlLoss(message.url, message.loss);
        return;
      case 'counters':
        producerTable = message.counters;
        storage?.countersChanged();
        return;
      case 'quit':
        return close(message.counters);
    }
  }

  // `open` is the only asynchronous step; chaining keeps later messages behind it and in order.
  let chain: Promise<void> = Promise.resolve();
  return (message) => {
    chain = chain
      .then(() => handle(message))
      .catch((error) => {
        const what = 'writer worker error';
        sendFatal(storage ? storage.fail(error, what) : BagError.wrap(error, 'IO_ERROR', what, { file: path }));
      });
  };
}

async function importBackend(specifier: string, name: string): Promise<Backend> {
  const module = (await import(specifier)) as Record<string, unknown>;
  const candidates = [module['default'], ...Object.values(module)];
  const found = candidates.find((value): value is Backend => isBackend(value) && value.name === name);
  if (!found)
    throw new BagError('INTERNAL', `module ${specifier} exports no backend named "${name}" (Backend.workerModule)`);
  return found;
}

function isBackend(value: unknown): value is Backend {
  return typeof value === 'object' && value !== null && typeof (value as Backend).createWriter === 'function';
}
