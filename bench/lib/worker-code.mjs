// The writer worker's own code on one thread (bench/integrity.bench.mjs awaitWrite, issue 20): the real `serveWriter`
// of packages/core, handed batches built beforehand through a link that stays on this thread, then `quit`: what
// the worker spends to write N frames of 64 B to a .vcap when nothing else runs and nothing waits for a producer.
// Timed from `open` to `closed` (the fsync included), as the syncMode loop it is compared with runs from create() to
// close(). `await write()` runs the producer and this code on two threads; where the worker sets the pace, syncMode
// time / this time is as close to syncMode as `await write()` can come, however well the two threads overlap.
import { Worker as NodeWorker } from 'node:worker_threads';
import { readFileSync, rmSync } from 'node:fs';
import { BagWriter } from '../../packages/bag/dist/index.js';
import { serveWriter } from '../../packages/core/dist/writer-worker/writer-service.js';
import {
  FIELDS,
  F_ACTION,
  F_CHUNK,
  F_LENGTH,
  F_OFFSET,
  F_PUBLISH,
  F_SCHEMA,
  F_SER,
  F_TS,
  F_URL,
} from '../../packages/core/dist/writer-worker/protocol.js';

/** Frames per batch: what a full batch of the default writer holds (`maxTaskDepth` 20,000 / 8). */
const BATCH = 2500;

/**
 * The `open` message a default BagWriter sends its worker for a .vcap at `path` (its resolved config, context and
 * backend module), read off the worker's postMessage: built by the writer itself, so it stays what the writer sends.
 */
async function openMessageFor(path, frame) {
  const classes = [NodeWorker, globalThis.Worker].filter((c) => typeof c === 'function');
  const originals = classes.map((c) => c.prototype.postMessage);
  let open;
  classes.forEach((c, k) => {
    c.prototype.postMessage = function (message, transfer) {
      if (message?.k === 'open' && open === undefined) open = message;
      return originals[k].call(this, message, transfer);
    };
  });
  try {
    const writer = await BagWriter.create(path, { summary: false });
    await writer.write(frame);
    await writer.close();
  } finally {
    classes.forEach((c, k) => {
      c.prototype.postMessage = originals[k];
    });
    rmSync(path, { force: true });
  }
  if (!open) throw new Error('worker-code: no open message seen (is the writer worker posted through another class?)');
  return open;
}

/** `n` frames of `data[i & 7]` (64 B each) as batches of shared memory laid out as the producer lays them out. */
function buildBatches(n, data) {
  const size = data[0].length;
  const stride = (size + 7) & ~7;
  const batches = [];
  for (let first = 0; first < n; first += BATCH) {
    const count = Math.min(BATCH, n - first);
    const arena = new SharedArrayBuffer(count * stride);
    const bytes = new Uint8Array(arena);
    const meta = new SharedArrayBuffer(count * FIELDS * 8);
    const m = new Float64Array(meta);
    for (let i = 0; i < count; i++) {
      const base = i * FIELDS;
      bytes.set(data[(first + i) & 7], i * stride);
      m[base + F_TS] = first + i;
      m[base + F_URL] = 0;
      m[base + F_SER] = 1;
      m[base + F_SCHEMA] = 0;
      m[base + F_ACTION] = 1;
      m[base + F_CHUNK] = 0;
      m[base + F_OFFSET] = i * stride;
      m[base + F_LENGTH] = size;
      m[base + F_PUBLISH] = Number.NaN;
    }
    batches.push({ count, bytes: count * size, meta, arena });
  }
  return batches;
}

/** This thread's CPU ms so far (Linux), else undefined. */
function threadCpuMs() {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return undefined;
  }
}

/** One recording through `serveWriter` on this thread: ms from `open` to `closed`, and this thread's CPU ms. */
async function writeThroughWorkerCode(open, path, batches) {
  let deliver;
  let opened;
  let closed;
  const isOpen = new Promise((resolve, reject) => (opened = { resolve, reject }));
  const isClosed = new Promise((resolve) => (closed = resolve));
  serveWriter({
    onMessage: (handler) => (deliver = handler),
    post: (message) => {
      if (message.k === 'opened') opened.resolve();
      else if (message.k === 'openFailed') opened.reject(new Error(message.error.message));
      else if (message.k === 'closed') closed(message);
    },
    close: () => {},
  });
  const t0 = performance.now();
  const cpu0 = threadCpuMs();
  deliver({ ...open, path, progress: undefined });
  await isOpen;
  for (let b = 0; b < batches.length; b++) {
    const { count, bytes, meta, arena } = batches[b];
    const strings = b === 0 ? ['dds://bench', 'raw'] : [];
    deliver({
      k: 'batch',
      seq: b + 1,
      count,
      bytes,
      meta,
      chunks: [arena],
      slabs: [],
      forget: [],
      strings,
      schemas: [],
      durable: [],
      commit: false,
    });
    // The acks go out from the event loop, as in the worker (where messages arrive one task at a time).
    if (b % 16 === 15) await new Promise((resolve) => setImmediate(resolve));
  }
  deliver({ k: 'quit', counters: {} });
  const end = await isClosed;
  const ms = performance.now() - t0;
  const cpu1 = threadCpuMs();
  rmSync(path, { force: true });
  if (end.error) throw new Error(`worker-code: ${end.error.message}`);
  return { ms, cpuMs: cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0 };
}

/**
 * The worker's code alone against `syncLoop(n, data)` (the benchmark's own), `reps` interleaved pairs: medians of
 * ms per run and the median of the paired ratios syncMode / worker code.
 */
export async function workerCodeAlone({ n, data, path, syncLoop, median, reps }) {
  const frame = { timestamp: 0, url: 'dds://bench', data: data[0], serType: 'raw', schemaType: 0, actionType: 1 };
  const open = await openMessageFor(path, frame);
  const batches = buildBatches(n, data);
  await writeThroughWorkerCode(open, path, batches);
  const worker = [];
  const sync = [];
  for (let rep = 0; rep < reps; rep++) {
    const order = rep % 2 ? ['sync', 'worker'] : ['worker', 'sync'];
    for (const name of order)
      if (name === 'worker') worker.push(await writeThroughWorkerCode(open, path, batches));
      else sync.push(await syncLoop(n, data));
  }
  const cpu = worker.every((w) => w.cpuMs !== undefined) ? median(worker.map((w) => w.cpuMs)) : undefined;
  return {
    workerCodeMs: median(worker.map((w) => w.ms)),
    syncMs: median(sync.map((s) => s.ms)),
    ceiling: median(worker.map((w, i) => sync[i].ms / w.ms)),
    // CPU of the thread that ran the worker's code, against the writer worker's in the two-thread runs: how much
    // more the same code costs beside a producer.
    ...(cpu === undefined ? {} : { workerCodeCpuMs: cpu }),
  };
}
