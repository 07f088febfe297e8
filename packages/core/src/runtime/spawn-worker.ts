import type { ParentLink, WorkerLink, WorkerRuntime } from './worker-link.js';

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

/**
 * A worker program (the writer's in `writer-worker/idle-writers.ts`, the HTTP server's bag pool): one module per
 * adapter, because the worker side reaches its parent differently (`parentLink('node')` is `node:worker_threads`'
 * `parentPort`, `parentLink('web')` the global scope).
 */
export interface WorkerEntries {
  node: URL | string;
  web: URL | string;
  /** Names the worker in error messages (`… worker exited with code 1`). */
  label: string;
}

/** Starts the program `entries` names through the chosen adapter. Each adapter is imported only when used. */
export async function spawnWorker(runtime: WorkerRuntime, entries: WorkerEntries): Promise<WorkerLink> {
  if (runtime === 'node') return (await import('./worker-node.js')).spawnNodeWorker(entries.node, entries.label);
  return (await import('./worker-web.js')).spawnWebWorker(entries.web, entries.label);
}

/** The worker side's handle on its parent, for a worker started with `spawnWorker(runtime, entries)`. */
export async function parentLink(runtime: WorkerRuntime): Promise<ParentLink> {
  if (runtime === 'node') return (await import('./parent-node.js')).nodeParentLink();
  return (await import('./parent-web.js')).webParentLink();
}
