import type { Backend, RecordingContext } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { ResolvedWriterConfig } from '../model/config.js';
import type { WorkerRuntime } from '../runtime/worker-link.js';
import { WriterWorker } from '../writer-worker/idle-writers.js';
import type { SharedProgress } from '../writer-worker/progress.js';
import type { OpenMessage } from '../writer-worker/protocol.js';
import type { SchemaRegistry } from './schema-registry.js';
import type { SourceQueues } from './source-queues.js';

export interface WorkerEngineOptions {
  path: string;
  config: ResolvedWriterConfig;
  context: RecordingContext;
  backend: Backend & { workerModule: string };
  schemas: SchemaRegistry;
  runtime: WorkerRuntime;
  transfer: boolean;
  /** How long a queue may take to drain at the writer's measured rate (ms): the depth allowance beyond `maxTaskDepth`. */
  maxQueueTimeMs: number;
  /** The per-source limits and counts (see source-queues.ts). */
  sources: SourceQueues;
}

/**
 * How an async writer gets its worker and has the file opened there: a worker is taken (an idle one that closed its
 * last file cleanly, or a new one), sent `open` with everything the backend needs that can cross threads, and the
 * writer waits for `opened` or `openFailed`, so `BagWriter.create` rejects with the backend's own error.
 */
export async function takeWriterWorker(options: WorkerEngineOptions): Promise<WriterWorker> {
  try {
    return await WriterWorker.take(options.runtime);
  } catch (cause) {
    throw new BagError(
      'INTERNAL',
      `cannot start a writer worker (${options.runtime}); pass { worker: false } to write on this thread`,
      { file: options.path, cause },
    );
  }
}

/** The `open` message: the context without its callbacks (they stay on this thread), and the shared counters. */
export function openMessage(options: WorkerEngineOptions, progress: SharedProgress | undefined): OpenMessage {
  const { resolveSchema: _r, onSplit: _s, ...context } = options.context;
  return {
    k: 'open',
    path: options.path,
    config: options.config,
    context,
    backendModule: options.backend.workerModule,
    backendName: options.backend.name,
    ...(progress ? { progress: progress.buffer } : {}),
  };
}

/**
 * Posts `open` and waits for the worker's answer (`opened` resolves, `openFailed` rejects `answered`), keeping the
 * process alive meanwhile. A worker that could not open the file exits: it is not handed to the next recording.
 */
export async function openInWorker(link: WriterWorker, open: OpenMessage, answered: Promise<void>): Promise<void> {
  link.ref();
  link.post(open);
  try {
    await answered;
  } catch (error) {
    await link.exit();
    throw error;
  }
  link.unref();
}
