import type { Backend } from '../backend/backend.js';
import type { BagError } from '../errors.js';
import type { WriterConfig } from '../model/config.js';
import type { WorkerRuntime } from '../worker/link.js';
import { defaultWorkerRuntime } from '../worker/spawn.js';

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
