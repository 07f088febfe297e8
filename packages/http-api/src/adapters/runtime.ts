import type { Listener } from './contract.js';

/** The running runtime: Bun (`Bun.serve`), Deno (`Deno.serve`) or Node (`@hono/node-server`). */
export function detectRuntime(): 'node' | 'bun' | 'deno' {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Bun !== undefined) return 'bun';
  if (g.Deno !== undefined) return 'deno';
  return 'node';
}

/**
 * The listener of the running runtime, imported on demand (each pulls in its runtime's server). Used by `serve()` for
 * the bag API and by the Foxglove feed server (`vlink-bag play --serve`) for its one socket.
 */
export async function runtimeListener(): Promise<Listener> {
  switch (detectRuntime()) {
    case 'bun':
      return (await import('./bun-listener.js')).listenBun;
    case 'deno':
      return (await import('./deno-listener.js')).listenDeno;
    default:
      return (await import('./node-listener.js')).listenNode;
  }
}
