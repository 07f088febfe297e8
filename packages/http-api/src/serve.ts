import { BagError } from '@vlink/bag';
import { type Adapter, isLoopbackHost, type RunningServer, type ServeOptions } from './adapters/contract.js';

export { isLoopbackHost } from './adapters/contract.js';
export type { Adapter, RunningServer, ServeOptions } from './adapters/contract.js';

/** Picks the adapter of the running runtime: Bun (`Bun.serve`), Deno (`Deno.serve`) or Node (`@hono/node-server`). */
export function detectRuntime(): 'node' | 'bun' | 'deno' {
  const g = globalThis as { Bun?: unknown; Deno?: unknown };
  if (g.Bun !== undefined) return 'bun';
  if (g.Deno !== undefined) return 'deno';
  return 'node';
}

/**
 * Serves the API with the current runtime's adapter. Refuses (BagError INVALID_ARGUMENT) to bind a non-loopback host
 * without a token, because the API exposes every bag under the root.
 */
export async function serve(options: ServeOptions): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8765;
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new BagError('INVALID_ARGUMENT', `invalid port ${port}`);
  if (!isLoopbackHost(host) && !options.token) {
    throw new BagError(
      'INVALID_ARGUMENT',
      `refusing to listen on ${host} without a token: pass a token, or bind 127.0.0.1`,
    );
  }
  const runtime = detectRuntime();
  const adapter: Adapter =
    runtime === 'bun'
      ? (await import('./adapters/bun.js')).serveBun
      : runtime === 'deno'
        ? (await import('./adapters/deno.js')).serveDeno
        : (await import('./adapters/node.js')).serveNode;
  return adapter({ ...options, host, port });
}
