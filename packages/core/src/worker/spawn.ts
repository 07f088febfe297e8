import type { WorkerLink, WorkerRuntime } from './link.js';

interface RuntimeGlobals {
  Bun?: unknown;
  Deno?: unknown;
  process?: { versions?: { node?: string } };
  Worker?: unknown;
}

/**
 * The adapter this runtime should use, or undefined where there are no workers: Bun gets its native Web Worker (it
 * can be unref'd and is the faster of its two), Node and Deno get `node:worker_threads` (Deno's Web Worker cannot be
 * unref'd), anything else with a global `Worker` (browsers) the Web Worker.
 */
export function defaultWorkerRuntime(): WorkerRuntime | undefined {
  const g = globalThis as RuntimeGlobals;
  if (g.Bun !== undefined) return 'web';
  if (g.Deno !== undefined || g.process?.versions?.node) return 'node';
  return typeof g.Worker === 'function' ? 'web' : undefined;
}

/** Which adapters this runtime can run at all (tests run the writer through each). */
export function availableWorkerRuntimes(): WorkerRuntime[] {
  const g = globalThis as RuntimeGlobals;
  const out: WorkerRuntime[] = [];
  if (g.Deno !== undefined || g.process?.versions?.node) out.push('node');
  if (typeof g.Worker === 'function') out.push('web');
  return out;
}

/** Starts a writer worker through the chosen adapter; each adapter is imported only when used. */
export async function spawnWorker(runtime: WorkerRuntime): Promise<WorkerLink> {
  if (runtime === 'node') return (await import('./node.js')).spawnNodeWorker();
  return (await import('./web.js')).spawnWebWorker();
}
