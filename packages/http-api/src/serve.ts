import { BagError } from '@vlink/bag';
import type { AppOptions } from './app.js';

export interface ServeOptions extends Omit<AppOptions, 'websocket'> {
  /** Interface to bind. Default `127.0.0.1`. Anything but loopback requires `token`. */
  host?: string;
  /** Port; 0 picks a free one. Default 8765. */
  port?: number;
}

/** A listening server. `close()` ends WebSocket sessions, stops listening and closes cached readers. */
export interface RunningServer {
  readonly port: number;
  /** `http://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  /** Which adapter is serving: `node`, `bun` or `deno`. */
  readonly runtime: 'node' | 'bun' | 'deno';
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** What every runtime adapter implements: start the app on host:port. */
export type Adapter = (options: ServeOptions & { host: string; port: number }) => Promise<RunningServer>;

export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

export function serverUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

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
