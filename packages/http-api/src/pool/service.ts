import { BagError, registerBackend, type Backend, type ParentLink } from '@vlink/bag';
import { usePrivateTempRoot } from '@vlink/bag-core/internal';
import { placeOf } from '../store/bag-place.js';
import { BagStore } from '../store/bag-store.js';
import { lowerThreadPriority, WORKER_NICE } from './priority.js';
import { LocalBagWork } from '../work/local-work.js';
import {
  errorToData,
  type FactsData,
  PULL_BYTES,
  type BackendModule,
  type FromWorker,
  type InitMessage,
  type Job,
  type PullResult,
  type ToWorker,
} from './protocol.js';

/**
 * The worker half of the bag pool: a `LocalBagWork` over its own BagStore (readers, info and decoders are cached per
 * worker), answering jobs concurrently. Messages are handled as they arrive, so a `cancel` is answered `alive` at
 * once whenever this thread is not stuck in a synchronous call; that answer is how the server tells a slow job from
 * a hung thread.
 */
export function serveBagWork(link: ParentLink): void {
  let ready: Promise<{ work: LocalBagWork; unavailable: string[] }> | undefined;
  const running = new Map<number, AbortController>();
  const streams = new Map<number, ReadableStreamDefaultReader<Uint8Array>>();
  let nextStream = 1;
  const post = (message: FromWorker, transfer?: ArrayBuffer[]) => link.post(message, transfer);

  async function run(
    work: LocalBagWork,
    job: Job,
    signal: AbortSignal,
  ): Promise<{ value: unknown; transfer?: ArrayBuffer[] }> {
    switch (job.k) {
      case 'info':
        return { value: await work.info(job.bag) };
      case 'schemas':
        return { value: await work.schemas(job.bag) };
      case 'facts': {
        const progress = job.progress ? new Int32Array(job.progress) : undefined;
        const onBag = progress ? (index: number) => Atomics.store(progress, 0, index) : undefined;
        const facts = await work.facts(job.bags, { budgetMs: job.budgetMs, signal, ...(onBag ? { onBag } : {}) });
        const value: FactsData[] = facts.map((f) => (f.error ? { error: errorToData(f.error) } : f));
        return { value };
      }
      case 'attachment': {
        const buffer = ownBuffer(await work.attachment(job.bag, job.index));
        return { value: buffer, transfer: [buffer] };
      }
      case 'timing':
        return { value: await work.timing(job.bag, job.request, signal) };
      case 'report':
        return { value: await work.report(job.bag, job.request, signal) };
      case 'density':
        return { value: await work.density(job.bag, job.request, signal) };
      case 'page':
        return { value: await work.page(job.bag, job.request, signal) };
      case 'stream': {
        const stream = await work.stream(job.bag, job.request);
        const sid = nextStream++;
        streams.set(sid, stream.getReader());
        return { value: sid };
      }
      case 'pull':
        return pull(job.sid);
      case 'end': {
        const reader = streams.get(job.sid);
        streams.delete(job.sid);
        await reader?.cancel().catch(() => undefined);
        return { value: true };
      }
    }
  }

  /** Reads about PULL_BYTES; a read error after some chunks still delivers those chunks, then the error. */
  async function pull(sid: number): Promise<{ value: PullResult; transfer: ArrayBuffer[] }> {
    const reader = streams.get(sid);
    if (!reader) throw new Error(`no stream ${sid}`);
    const chunks: ArrayBuffer[] = [];
    let bytes = 0;
    let done = false;
    let failure: unknown;
    while (bytes < PULL_BYTES) {
      let step: ReadableStreamReadResult<Uint8Array>;
      try {
        step = await reader.read();
      } catch (error) {
        failure = error;
        break;
      }
      if (step.done) {
        done = true;
        break;
      }
      chunks.push(ownBuffer(step.value));
      bytes += step.value.byteLength;
    }
    if (done || failure !== undefined) streams.delete(sid);
    if (failure !== undefined && chunks.length === 0) throw failure;
    const value: PullResult = { chunks, done };
    if (failure !== undefined) value.error = errorToData(failure);
    return { value, transfer: chunks };
  }

  link.onMessage((raw) => {
    const message = raw as ToWorker;
    if (message.k === 'init') {
      ready = init(message);
      ready.then(
        ({ unavailable }) => post({ k: 'ready', unavailable }),
        // Every job will fail with the reason; the worker itself is up.
        () => post({ k: 'ready', unavailable: [] }),
      );
      return;
    }
    if (message.k === 'cancel') {
      post({ k: 'alive', jid: message.jid });
      running.get(message.jid)?.abort();
      return;
    }
    const { jid, job } = message;
    const abort = new AbortController();
    running.set(jid, abort);
    void (async () => {
      try {
        if (!ready) throw new Error('bag worker used before init');
        const { value, transfer } = await run((await ready).work, job, abort.signal);
        post({ k: 'done', jid, value }, transfer);
      } catch (error) {
        post({ k: 'failed', jid, error: errorToData(error) });
      } finally {
        running.delete(jid);
      }
    })();
  });
  post({ k: 'hello' });
}

async function init(message: InitMessage): Promise<{ work: LocalBagWork; unavailable: string[] }> {
  lowerThreadPriority(WORKER_NICE);
  if (message.scratch !== undefined) usePrivateTempRoot(message.scratch);
  const unavailable: string[] = [];
  for (const spec of message.backends) {
    try {
      registerBackend(await loadBackend(spec));
    } catch (error) {
      // One backend whose module cannot be loaded here must not take the others down: its bags fail with why,
      // and the server reads them on its own thread from then on (it learns this from `ready`).
      registerBackend(unavailableBackend(spec, error));
      unavailable.push(...spec.extensions);
    }
  }
  const store = new BagStore(placeOf(message.root), {
    cacheSize: message.readerCache,
    decode: { maxBytes: message.limits.maxDecodeBytes, maxDepth: message.limits.maxDecodeDepth },
  });
  // No read-ahead: a worker reads only inside a job, so the job running when a worker hangs is the one that hung it.
  return { work: new LocalBagWork(store, message.limits, 0), unavailable };
}

function unavailableBackend(spec: BackendModule, error: unknown): Backend {
  const refuse = () =>
    Promise.reject(
      new BagError('NOT_SUPPORTED', `the ${spec.name} backend cannot be loaded in a bag worker`, {
        cause: error,
      }),
    );
  return { name: spec.name, extensions: spec.extensions, createWriter: refuse, openReader: refuse };
}

/** Imports `Backend.workerModule` and takes the backend of that name, registered for the parent's extensions only. */
async function loadBackend(spec: BackendModule): Promise<Backend> {
  const module = (await import(spec.module)) as Record<string, unknown>;
  const found = [module['default'], ...Object.values(module)].find(
    (value): value is Backend =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as Backend).openReader === 'function' &&
      (value as Backend).name === spec.name,
  );
  if (!found) throw new Error(`module ${spec.module} exports no backend named "${spec.name}"`);
  return Object.create(found, { extensions: { value: spec.extensions } }) as Backend;
}

/** The chunk's bytes in an ArrayBuffer of their own, so it can be transferred without copying the rest. */
function ownBuffer(chunk: Uint8Array): ArrayBuffer {
  const buffer = chunk.buffer as ArrayBuffer;
  if (chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength) return buffer;
  return chunk.slice().buffer as ArrayBuffer;
}
