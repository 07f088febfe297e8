import type { WorkerLink } from './worker-link.js';

/** Bun's Worker adds ref/unref to the standard one; browsers and Deno have neither. */
interface WebWorker extends Worker {
  ref?(): void;
  unref?(): void;
}

/**
 * Standard Web Worker adapter (Bun, browsers; Deno when asked for explicitly). A Web Worker has no exit event, so
 * `exit()` terminates it once the worker has said `closed` (its file is already closed by then).
 */
export async function spawnWebWorker(entry: URL | string, label: string): Promise<WorkerLink> {
  const worker = new Worker(entry, { type: 'module' }) as WebWorker;
  let failure: ((error: Error) => void) | undefined;
  return {
    runtime: 'web',
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    onMessage: (handler) => worker.addEventListener('message', (event) => handler((event as MessageEvent).data)),
    onFailure: (handler) => {
      failure = handler;
      worker.addEventListener('error', (event) => {
        (event as Event).preventDefault?.();
        failure?.(toError((event as ErrorEvent).error ?? (event as ErrorEvent).message, label));
      });
      worker.addEventListener('messageerror', () =>
        failure?.(new Error(`${label} worker could not deserialize a message`)),
      );
    },
    ref: () => worker.ref?.(),
    unref: () => worker.unref?.(),
    async exit() {
      worker.terminate();
    },
  };
}

function toError(value: unknown, label: string): Error {
  return value instanceof Error ? value : new Error(String(value || `${label} worker failed`));
}
