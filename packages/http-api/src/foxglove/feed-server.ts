import type { Frame, Info, SchemaData } from '@vlink/bag';
import { Hono } from 'hono';
import type { WSContext } from 'hono/ws';
import { runtimeListener } from '../adapters/runtime.js';
import { defaultBufferedAmount } from '../ws/socket.js';
import { foxgloveOffer } from './channels.js';
import { errorResponse, HttpError } from '../http/errors.js';
import { assertHandshake, upgradeOptionsFor } from '../ws/handshake.js';
import { assertFoxgloveProtocol, FOXGLOVE_SUBPROTOCOL, FoxgloveConnection } from './foxglove-connection.js';

export interface FoxgloveFeedOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  serverName: string;
  /** How the bag is named in the server metadata (play: its path). */
  bag: string;
  info: Info;
  schemas: readonly SchemaData[];
  /** Only these urls are advertised (the url selection); default every url. */
  keep?: ReadonlySet<string>;
}

/** A Foxglove WebSocket server on its own port, fed frame by frame by its owner. */
export interface FoxgloveFeedServer {
  /** `ws://host:port` (IPv6 hosts in brackets). */
  readonly url: string;
  /** Connected clients. */
  readonly clients: number;
  /** Frames a subscribed client did not get because it had fallen behind (over `MAX_QUEUED_BYTES` queued). */
  readonly dropped: number;
  /**
   * Resolves once a client subscribed, plus `settleMs`: clients send one `subscribe` per channel (or several in a
   * row), so playback waits for the burst to end instead of starting with only the first channel subscribed.
   */
  waitForSubscriber(settleMs?: number): Promise<void>;
  /** Sends the frame to every client subscribed to its url's channel. */
  send(frame: Frame): void;
  /**
   * Waits (up to `ms`) for the clients to take what was sent, closes them (1001 `playback finished`), gives them
   * 500 ms to go, then stops listening (the runtime's server drops whoever is left).
   */
  close(ms?: number): Promise<void>;
}

/**
 * A client with this much queued (sent, not yet taken) gets no more frames until it catches up, and each frame it
 * misses is counted: the player keeps the bag's pace whoever watches, so without a bound a client slower than the
 * bag would grow the queue without end (and Bun's server drops past its 64 MiB limit without telling).
 */
export const MAX_QUEUED_BYTES = 32 * 1024 * 1024;

/**
 * `vlink-bag play --serve`: the server's Foxglove protocol (`FoxgloveConnection`, the same offer as the server's
 * `…/foxglove` socket) served on `host:port` by the runtime's listener, as a one-route hono app: any path upgrades.
 * The frames come from the caller (the CLI's player keeps pace, pause, keys and jumps), not from a `ReplaySession`.
 *
 * It checks neither `Origin` nor `Host`, as `play --serve` never did: Foxglove Studio opens it from
 * `https://app.foxglove.dev` or its desktop app, and `play` has no `--allow-origin` to name them; a `Host` check alone
 * would stop nothing, since a page can open `ws://127.0.0.1:<port>` directly. It serves the one bag the user chose to
 * play, on loopback unless told otherwise.
 */
export async function serveFoxgloveFeed(options: FoxgloveFeedOptions): Promise<FoxgloveFeedServer> {
  const offer = foxgloveOffer(options);
  const connections = new Set<FoxgloveConnection>();
  let firstSubscribed!: () => void;
  const firstSubscribe = new Promise<void>((resolve) => (firstSubscribed = resolve));
  let bufferedAmount: (ws: WSContext<unknown>) => number = defaultBufferedAmount;
  const sessionId = `${options.bag}@${Date.now()}`;

  const listen = await runtimeListener();
  const running = await listen(
    (runtime) => {
      bufferedAmount = runtime.websocket.bufferedAmount ?? defaultBufferedAmount;
      const app = new Hono();
      app.get('*', (c) => {
        // Refusals are the API's typed JSON errors, as on the server's own `…/foxglove` socket.
        try {
          if (c.req.header('upgrade')?.toLowerCase() !== 'websocket')
            throw new HttpError(
              'UPGRADE_REQUIRED',
              `this is a Foxglove WebSocket server (${FOXGLOVE_SUBPROTOCOL}): open it in Foxglove Studio`,
            );
          assertHandshake(c.req.method, (name) => c.req.header(name));
          assertFoxgloveProtocol(c.req.header('sec-websocket-protocol'));
        } catch (error) {
          return errorResponse(error);
        }
        let connection: FoxgloveConnection | undefined;
        const gone = () => {
          if (connection) connections.delete(connection);
        };
        return runtime.websocket.upgradeWebSocket(
          c,
          {
            onOpen(_event, ws) {
              connection = new FoxgloveConnection(ws, offer, firstSubscribed);
              connections.add(connection);
              connection.open(sessionId);
            },
            onMessage(event) {
              connection?.receive(event.data);
            },
            onClose: gone,
            onError: gone,
          },
          upgradeOptionsFor(runtime.websocket, FOXGLOVE_SUBPROTOCOL),
        );
      });
      // The listener's close calls this first; `close()` below has already said goodbye.
      return Object.assign(app, { close: async () => undefined });
    },
    { host: options.host, port: options.port },
  );

  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  let dropped = 0;
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  return {
    url: `ws://${host}:${running.port}`,
    get clients() {
      return connections.size;
    },
    async waitForSubscriber(settleMs = 200) {
      await firstSubscribe;
      await sleep(settleMs);
    },
    get dropped() {
      return dropped;
    },
    send(frame) {
      for (const connection of connections) {
        if (bufferedAmount(connection.ws) <= MAX_QUEUED_BYTES) connection.sendFrame(frame);
        else if (connection.subscribesTo(frame.url)) dropped++;
      }
    },
    close(ms = 2000) {
      return (closing ??= (async () => {
        const deadline = Date.now() + ms;
        const pending = () => [...connections].some((c) => bufferedAmount(c.ws) > 0);
        while (pending() && Date.now() < deadline) await sleep(10);
        for (const connection of connections) {
          try {
            connection.ws.close(1001, 'playback finished');
          } catch {
            // already closing
          }
        }
        const grace = Date.now() + 500;
        while (connections.size > 0 && Date.now() < grace) await sleep(10);
        await running.close();
      })());
    },
  };
}
