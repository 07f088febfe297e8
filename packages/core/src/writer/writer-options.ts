import type { Backend } from '../backend/backend.js';
import type { BagError } from '../errors.js';
import type { WriterConfig } from '../model/config.js';
import type { WorkerRuntime } from '../runtime/worker-link.js';
import type { SourceLimits } from './source-queues.js';
import { defaultWorkerRuntime } from '../runtime/spawn-worker.js';

/** `BagWriter.create` options: VLink's `Config` plus how async mode runs. */
export interface BagWriterOptions extends Partial<WriterConfig> {
  /**
   * Async mode only. `true`/undefined: write in a worker when the runtime and the backend allow it (else the
   * same-thread queue); `false`: always the same-thread queue; `'node'`/`'web'`: force that worker adapter.
   */
  worker?: boolean | WorkerRuntime;
  /**
   * Worker mode: move payloads of 16 KiB and more to the worker without copying when the frame's `data` covers its whole
   * ArrayBuffer. That buffer is detached (unusable by the caller) once handed over, so only set this when every such
   * buffer is yours to give away. Default false: payloads are copied once.
   */
  transferPayloads?: boolean;
  /**
   * Worker mode: the queue also takes as many frames as the worker writes in this many ms at its measured rate, when
   * that is more than `maxTaskDepth` (default 250; 0 keeps VLink's plain frame limit). `maxMemorySize` still bounds the
   * queued bytes. Small frames then ride out the writer's own stalls (a chunk write, an fsync, a GC pause) instead of
   * being dropped. Until a recording has measured its own rate (within its first ms of work) it starts from the rate
   * the last recording of the same format measured in this process, or, for the first, from a fast writer's (2M
   * frames/s).
   */
  maxQueueTimeMs?: number;
  /**
   * Write the sidecar summary `<path>.json` beside the recording at close (default true; format reference §13): per
   * url and action the first/last log and publish times, count, rate and interval percentiles, the counters by cause,
   * errors, and whether the recording ended cleanly. It costs one read of the file after it is closed.
   */
  summary?: boolean;
  /**
   * Async mode: per-source queue limits (docs guide "The writer's queues"). Every url is a source of its own; a source
   * named here groups `urls` (exact, or prefixes ending in `*`; default: the name itself is the url) under its own
   * `maxFrames`/`maxBytes`, beside the shared `maxTaskDepth`/`maxMemorySize`. Once the shared queue is full, a source
   * below its fair share of it is still admitted, so one firehose cannot starve the others. Ignored in `syncMode`.
   */
  sources?: Readonly<Record<string, SourceLimits>>;
}

/** Dispatched as `'drop'` when frames start being dropped (the first drop after a second without any). */
export class WriterDropEvent extends Event {
  constructor(
    readonly reason: string,
    readonly url: string | undefined,
    readonly error: BagError,
  ) {
    super('drop');
  }
}

/** Dispatched as `'error'` (like the error callbacks) for every error a writer reports. */
export class WriterErrorEvent extends Event {
  constructor(readonly error: BagError) {
    super('error');
  }
}

/** Worker mode needs a worker-capable runtime and a backend that says which module to import in the worker. */
export function pickRuntime(choice: BagWriterOptions['worker'], backend: Backend): WorkerRuntime | undefined {
  if (choice === false || !backend.workerModule) return undefined;
  return choice === 'node' || choice === 'web' ? choice : defaultWorkerRuntime();
}
