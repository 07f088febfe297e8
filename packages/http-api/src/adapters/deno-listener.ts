import { BagError } from '@vlink/bag';
import { upgradeWebSocket } from 'hono/deno';
import { internalErrorResponse } from '../http/internal-error.js';
import { boundHostNames, serverUrl, type Listener } from './contract.js';

/** The parts of Deno's API this listener uses (no Deno types dependency). */
interface DenoServer {
  addr: { port: number };
  finished: Promise<void>;
  shutdown(): Promise<void>;
}
interface DenoGlobal {
  serve(options: Record<string, unknown>, handler: (request: Request) => Response | Promise<Response>): DenoServer;
}

/** Deno: `Deno.serve` with hono's Deno WebSocket upgrade. */
export const listenDeno: Listener = async (build, options) => {
  const Deno = (globalThis as unknown as { Deno: DenoGlobal }).Deno;
  let port = options.port;
  const app = build({
    websocket: { upgradeWebSocket, upgradeOptions: { idleTimeout: 0 } },
    boundHosts: boundHostNames(options.host, () => port),
  });
  let server: DenoServer;
  try {
    server = Deno.serve(
      // Ours, not Deno's default `onError` (which logs the error and answers plain text).
      { hostname: options.host, port: options.port, onListen() {}, onError: () => internalErrorResponse() },
      (request) => app.fetch(request),
    );
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', `cannot listen on ${options.host}:${options.port}`);
  }
  port = server.addr.port;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await server.shutdown();
    })());
  return {
    port: server.addr.port,
    url: serverUrl(options.host, server.addr.port),
    runtime: 'deno',
    close,
    [Symbol.asyncDispose]: close,
  };
};
