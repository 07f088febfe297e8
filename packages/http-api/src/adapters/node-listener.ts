import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { BagError } from '@vlink/bag';
import { boundHostNames, serverUrl, type Listener, type RunningServer, type ServedApp } from './contract.js';
import { answerClientError } from './node-client-error.js';
import { nodeErrorResponse } from './node-request-error.js';
import { nodeWebSockets } from './node-upgrade.js';

/**
 * Node: `@hono/node-server`'s request listener on our own `http.Server` (so its error handler is ours: node-server's
 * default answers `Error: <message>` as text; see `node-request-error.ts`), `@hono/node-ws` (the `ws` package) for
 * WebSockets, with our own upgrade handling (`node-upgrade.ts`).
 */
export const listenNode: Listener = async (build, options) => {
  let app: ServedApp | undefined;
  let port = options.port;
  // node-ws needs the app to route upgrades, and the app needs node-ws's upgrader: bind late.
  const nodeWs = nodeWebSockets(() => app!);
  app = build({
    websocket: {
      upgradeWebSocket: nodeWs.upgradeWebSocket,
      bufferedAmount: (ws) => (ws.raw as { bufferedAmount?: number } | undefined)?.bufferedAmount ?? 0,
    },
    boundHosts: boundHostNames(options.host, () => port),
  });
  const served = app;
  const listener = getRequestListener(served.fetch, {
    hostname: options.host,
    errorHandler: nodeErrorResponse,
  });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(listener);
    s.on('clientError', answerClientError);
    s.once('listening', () => resolve(s));
    s.once('error', (error) =>
      reject(BagError.wrap(error, 'IO_ERROR', `cannot listen on ${options.host}:${options.port}`)),
    );
    s.listen(options.port, options.host);
  });
  nodeWs.inject(server);
  port = (server.address() as AddressInfo).port;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await served.close();
      for (const client of nodeWs.wss.clients) client.terminate();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    })());
  const running: RunningServer = {
    port,
    url: serverUrl(options.host, port),
    runtime: 'node',
    close,
    [Symbol.asyncDispose]: close,
  };
  return running;
};
