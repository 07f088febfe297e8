import { BagError } from '@vlink/bag';
import { websocket } from 'hono/bun';
import { internalErrorResponse } from '../http/internal-error.js';
import { DEFAULT_DEADLINES } from '../work/limits.js';
import { upgradeBunWebSocket } from './bun-upgrade.js';
import { boundHostNames, serverUrl, type Listener } from './contract.js';

/** The parts of Bun's API this listener uses (no bun-types dependency). */
interface BunServer {
  port: number;
  stop(closeActiveConnections?: boolean): Promise<void> | void;
}
interface BunGlobal {
  serve(options: Record<string, unknown>): BunServer;
}

/** Bytes Bun may queue per socket before `send` starts dropping; well above the replay's own 8 MiB bound. */
const BACKPRESSURE_LIMIT = 64 * 1024 * 1024;

/** Bun: `Bun.serve` with hono's Bun WebSocket handler (and our upgrade: `bun-upgrade.ts`). */
export const listenBun: Listener = async (build, options) => {
  const Bun = (globalThis as unknown as { Bun: BunGlobal }).Bun;
  let port = options.port;
  const app = build({
    websocket: {
      upgradeWebSocket: upgradeBunWebSocket,
      bufferedAmount: (ws) => (ws.raw as { getBufferedAmount?: () => number } | undefined)?.getBufferedAmount?.() ?? 0,
    },
    boundHosts: boundHostNames(options.host, () => port),
  });
  let server: BunServer;
  try {
    server = Bun.serve({
      hostname: options.host,
      port: options.port,
      fetch: app.fetch,
      // Ours, not Bun's: its development mode (the default outside NODE_ENV=production) answers with the stack.
      development: false,
      error: () => internalErrorResponse(),
      // Bun closes a connection idle for 10 s by default: a JSON answer may take up to the request deadline.
      idleTimeout: Math.min(255, Math.ceil((options.requestMs ?? DEFAULT_DEADLINES.requestMs) / 1000) + 30),
      websocket: {
        ...websocket,
        backpressureLimit: BACKPRESSURE_LIMIT,
        closeOnBackpressureLimit: false,
        idleTimeout: 0,
      },
    });
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', `cannot listen on ${options.host}:${options.port}`);
  }
  port = server.port;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await app.close();
      await server.stop(true);
    })());
  return {
    port: server.port,
    url: serverUrl(options.host, server.port),
    runtime: 'bun',
    close,
    [Symbol.asyncDispose]: close,
  };
};
