import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { createNodeWebSocket, type NodeWebSocket } from '@hono/node-ws';
import type { Hono } from 'hono';
import { defineWebSocketHelper } from 'hono/ws';
import { errorResponse, HttpError } from '../http/errors.js';
import { internalErrorResponse } from '../http/internal-error.js';
import type { WebSocketSupport } from '../ws/socket.js';
import type { ServedApp } from './contract.js';

/** A refusal body larger than this is not forwarded on an upgrade socket (its route streamed a whole answer). */
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * `@hono/node-ws` with two of its habits mended. On a refused upgrade it writes the status with an empty body (and
 * drops the app's answer, a streaming one without cancelling it): here the app's typed JSON error goes out whole, as
 * on Bun and Deno. And `ws` answers with the client's first subprotocol: here with the one the route names in its
 * upgrade options (`protocol`), as Deno does, e.g. `foxglove.websocket.v1` when a client offers `x` before it.
 */
export function nodeWebSockets(app: () => ServedApp): Pick<NodeWebSocket, 'wss'> & {
  upgradeWebSocket: WebSocketSupport['upgradeWebSocket'];
  inject(server: Server): void;
} {
  const lateApp = {
    request: (input: string | URL | Request, init?: RequestInit, env?: object) => app().request(input, init, env),
  };
  const nodeWs = createNodeWebSocket({ app: lateApp as unknown as Hono });
  /** Requests a route upgraded, with the subprotocol it chose (undefined: the client's first). */
  const accepted = new WeakMap<IncomingMessage, { protocol: string | undefined }>();
  nodeWs.wss.options.handleProtocols = (offered: Set<string>, request: IncomingMessage) => {
    const chosen = accepted.get(request)?.protocol;
    return chosen !== undefined && offered.has(chosen) ? chosen : (offered.values().next().value ?? false);
  };
  const upgradeWebSocket = defineWebSocketHelper(async (c, events, options) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const protocol = (options as { protocol?: unknown } | undefined)?.protocol;
    if (incoming) accepted.set(incoming, { protocol: typeof protocol === 'string' ? protocol : undefined });
    return nodeWs.upgradeWebSocket(c, events, options as never);
  });

  const inject = (server: Server) => {
    server.on('upgrade', async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => socket.destroy());
      try {
        const url = new URL(request.url ?? '/', 'http://localhost');
        const headers = new Headers();
        for (const [key, value] of Object.entries(request.headers)) {
          if (value === undefined) continue;
          headers.append(key, Array.isArray(value) ? (value[0] ?? '') : value);
        }
        const response = await lateApp.request(
          url,
          { method: request.method ?? 'GET', headers },
          { incoming: request, outgoing: undefined },
        );
        if (accepted.has(request)) {
          nodeWs.wss.handleUpgrade(request, socket, head, (ws) => nodeWs.wss.emit('connection', ws, request));
          return;
        }
        await refuse(socket, response);
      } catch {
        await refuse(socket, internalErrorResponse()).catch(() => socket.destroy());
      }
    });
  };
  return { upgradeWebSocket, wss: nodeWs.wss, inject };
}

/** Writes the app's answer to a request it did not upgrade, and closes the connection. */
async function refuse(socket: Duplex, response: Response): Promise<void> {
  let answer = response;
  let body = await readAtMost(answer, MAX_REFUSAL_BYTES);
  if (body === undefined) {
    // A route that answers a plain GET (a stream of messages) is no WebSocket endpoint: its answer is not buffered.
    answer = errorResponse(new HttpError('INVALID_ARGUMENT', 'this route does not upgrade to a WebSocket'));
    body = new Uint8Array(await answer.arrayBuffer());
  }
  const lines = [`HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status] ?? ''}`];
  answer.headers.forEach((value, key) => {
    if (!['connection', 'content-length', 'transfer-encoding'].includes(key)) lines.push(`${key}: ${value}`);
  });
  lines.push('Connection: close', `Content-Length: ${body.length}`, '', '');
  if (socket.destroyed) return;
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]));
}

/** The body when it is at most `max` bytes; else undefined, and the rest of the body is cancelled. */
async function readAtMost(response: Response, max: number): Promise<Uint8Array | undefined> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      void reader.cancel().catch(() => undefined);
      return undefined;
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}
