import type { OpenAPIHono } from '@hono/zod-openapi';
import { BagError } from '@vlink/bag';
import type { WSContext } from 'hono/ws';
import { assertFoxgloveProtocol, FOXGLOVE_SUBPROTOCOL, foxgloveSocket } from '../foxglove/foxglove-socket.js';
import { badParameter } from '../http/errors.js';
import { optionalNumber } from '../http/query.js';
import type { ReplaySource } from '../replay/replay-session.js';
import { replaySocket } from '../replay/replay-socket.js';
import type { BagStore } from '../store/bag-store.js';
import type { ResolvedBag } from '../store/resolve-id.js';
import type { BagWork } from '../work/bag-work.js';
import { assertHandshake, upgradeOptionsFor } from '../ws/handshake.js';
import { defaultBufferedAmount, type WebSocketSupport } from '../ws/socket.js';

export interface SocketRouteContext {
  store: BagStore;
  work: BagWork;
  websocket: WebSocketSupport | undefined;
  sockets: Set<WSContext<unknown>>;
  serverName: string;
}

/**
 * `WS …/replay` and `WS …/foxglove`. The bag is resolved, and opened by the pool (`work.info`), before the upgrade:
 * a bad id or a bag that does not open gets a normal HTTP error, and a hostile bag never reaches this thread. The
 * replay itself then reads on this thread, one frame at a time at the client's pace (core's playback engine runs on
 * a synchronous cursor), from a reader confined to the root.
 */
export function registerSocketRoutes(app: OpenAPIHono, context: SocketRouteContext): void {
  const { store, work, websocket: ws, sockets, serverName } = context;
  const bufferedAmount = ws?.bufferedAmount ?? defaultBufferedAmount;
  const track = (socket: WSContext<unknown>, open: boolean) => (open ? sockets.add(socket) : sockets.delete(socket));
  const replaySource = (b: ResolvedBag): ReplaySource => ({
    lease: () => store.lease(b),
    durationMs: async () => (await work.info(b)).totalDuration,
  });
  const needsUpgrade = (c: { req: { method: string; header(name: string): string | undefined } }) => {
    if (!ws) throw new BagError('NOT_SUPPORTED', 'WebSockets need a runtime adapter: start the server with serve()');
    assertHandshake(c.req.method, (name) => c.req.header(name));
    return ws;
  };

  app.get('/v1/bags/:id/replay', async (c) => {
    const support = needsUpgrade(c);
    const b = store.resolve(c.req.param('id'));
    await work.info(b);
    return support.upgradeWebSocket(
      c,
      replaySocket({ source: replaySource(b), bufferedAmount, track }),
      support.upgradeOptions,
    );
  });

  app.get('/v1/bags/:id/foxglove', async (c) => {
    const support = needsUpgrade(c);
    assertFoxgloveProtocol(c.req.header('sec-websocket-protocol'));
    const b = store.resolve(c.req.param('id'));
    // As the HTTP routes read theirs: each parameter once, a window whose end is not before its begin.
    const once = (name: string) => {
      const all = c.req.queries(name);
      if (all !== undefined && all.length > 1) throw badParameter(name, 'given more than once');
      return all?.[0];
    };
    const rate = optionalNumber(once('rate'), 'rate') ?? 1;
    const beginMs = optionalNumber(once('begin'), 'begin') ?? 0;
    const endMs = optionalNumber(once('end'), 'end');
    if (endMs !== undefined && endMs < beginMs) throw badParameter('end', 'before begin');
    const loop = once('loop');
    if (loop !== undefined && !['true', 'false', '1', '0'].includes(loop)) throw badParameter('loop', 'true or false');
    const [info, schemas] = await Promise.all([work.info(b), work.schemas(b)]);
    const events = foxgloveSocket({
      id: b.id,
      info,
      schemas,
      source: replaySource(b),
      rate,
      beginMs,
      loop: loop === 'true' || loop === '1',
      serverName,
      bufferedAmount,
      track,
      ...(endMs === undefined ? {} : { endMs }),
    });
    // The client may offer other protocols first (`x, foxglove.websocket.v1`): answer with the one spoken here.
    return support.upgradeWebSocket(c, events, upgradeOptionsFor(support, FOXGLOVE_SUBPROTOCOL));
  });
}
