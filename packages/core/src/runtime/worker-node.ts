import { inheritedExecArgv } from './exec-argv.js';
import type { WorkerLink } from './worker-link.js';

/**
 * `node:worker_threads` adapter, used by Node and by Deno: Deno's Web Worker cannot be unref'd, so an idle writer would
 * keep a Deno process alive forever, while its `node:worker_threads` can (see README "Recording off the event loop").
 * Loaded lazily so core still loads where `node:*` modules do not exist.
 */
export async function spawnNodeWorker(entry: URL | string, label: string): Promise<WorkerLink> {
  const { Worker } = await import('node:worker_threads');
  // Not the parent's flags as they are (see exec-argv.ts): `node --input-type=module -` would fail the worker.
  const worker = new Worker(typeof entry === 'string' ? new URL(entry) : entry, { execArgv: inheritedExecArgv() });
  let exited = false;
  let failure: ((error: Error) => void) | undefined;
  const gone = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      exited = true;
      resolve();
      if (code !== 0) failure?.(new Error(`${label} worker exited with code ${code}`));
    }),
  );
  return {
    runtime: 'node',
    post: (message, transfer) => worker.postMessage(message, transfer),
    onMessage: (handler) => void worker.on('message', handler),
    onFailure: (handler) => {
      failure = handler;
      worker.on('error', handler);
      worker.on('messageerror', handler);
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
    async exit() {
      // Called after the worker said `closed` (file closed, nothing left to run) or after it failed. Deno's port
      // close does not end the thread, so terminate instead of waiting for it to leave on its own.
      if (!exited) await worker.terminate();
      await gone;
    },
  };
}
