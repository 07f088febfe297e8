import { checkBagPath } from '../backend/bag-path.js';
import type { Backend, RecordingContext } from '../backend/backend.js';
import { backendFor } from '../backend/registry.js';
import { checkWriterSettings } from '../model/config-check.js';
import { resolveCheckedWriterConfig, type ResolvedWriterConfig } from '../model/config.js';
import type { EngineHost, WriteEngine } from './engine.js';
import { LocalEngine } from './local-engine.js';
import type { SchemaRegistry } from './schema-registry.js';
import { RecordingOutput } from './recording-output.js';
import { SourceQueues } from './source-queues.js';
import { WorkerEngine } from './worker-engine.js';
import { pickRuntime, type BagWriterOptions } from './writer-options.js';

/** What `BagWriter.create` makes of its path and options before the writer exists. */
export interface RecordingSetup {
  backend: Backend;
  config: ResolvedWriterConfig;
  sources: SourceQueues;
  output: RecordingOutput;
  options: Pick<BagWriterOptions, 'worker' | 'transferPayloads' | 'maxQueueTimeMs'>;
}

/**
 * Checks the path, picks the backend by extension, resolves the config (throws `INVALID_ARGUMENT` for bad values)
 * and prepares the output (a url's staging copy): everything that can fail before a file is created.
 */
export async function prepareRecording(path: string, options: BagWriterOptions): Promise<RecordingSetup> {
  checkBagPath(path);
  checkWriterSettings(options);
  const { worker, transferPayloads, maxQueueTimeMs, summary, sources: sourceLimits, ...config } = options;
  const sources = new SourceQueues(sourceLimits);
  const backend = backendFor(path, 'write');
  // Every setting was checked above, the engine's own with the config's: resolved without checking them twice.
  const resolved = resolveCheckedWriterConfig(config);
  const output = await RecordingOutput.prepare(path, summary !== false);
  return { backend, config: resolved, sources, output, options: { worker, transferPayloads, maxQueueTimeMs } };
}

export interface EngineChoice extends RecordingSetup {
  context: RecordingContext;
  schemas: SchemaRegistry;
}

/**
 * Opens the file through the engine the options and the backend allow: a worker (the default, when the runtime has
 * one and the backend ships a worker module), else the same-thread engine (`syncMode`, or no worker). Rejects with
 * the backend's error when the file cannot be created, whichever engine opens it.
 */
export async function openWriteEngine(host: EngineHost, choice: EngineChoice): Promise<WriteEngine> {
  const { backend, config, context, schemas, sources, options } = choice;
  // Where the backend writes: the bag, or the staging copy of a url.
  const path = choice.output.localPath;
  const runtime = config.syncMode ? undefined : pickRuntime(options.worker, backend);
  if (runtime && backend.workerModule) {
    return WorkerEngine.open(host, {
      path,
      config,
      context,
      schemas,
      runtime,
      transfer: options.transferPayloads === true,
      maxQueueTimeMs: options.maxQueueTimeMs ?? 250,
      sources,
      backend: backend as Backend & { workerModule: string },
    });
  }
  const backendWriter = await backend.createWriter(path, config, context);
  return new LocalEngine(backendWriter, host, path, config, sources);
}
