import { defineWebSocketHelper } from 'hono/ws';

/** The part of Bun's server this upgrade uses. */
interface BunUpgradeServer {
  upgrade(request: Request, options: { data: unknown; headers?: Record<string, string> }): boolean;
}

/**
 * hono/bun's `upgradeWebSocket` with the subprotocol the route names (`protocol` in its upgrade options) in the 101
 * answer: hono/bun passes no headers, and Bun then answers with the client's first offer, which need not be the
 * protocol the route speaks (`x, foxglove.websocket.v1`). Its socket data is hono/bun's own, so hono/bun's
 * `websocket` handlers run the events as before.
 */
export const upgradeBunWebSocket = defineWebSocketHelper((c, events, options) => {
  const env = c.env as { server?: BunUpgradeServer } & BunUpgradeServer;
  const server = env && 'server' in env && env.server ? env.server : env;
  if (!server || typeof server.upgrade !== 'function')
    throw new TypeError('env has to include the 2nd argument of fetch.');
  const chosen = (options as { protocol?: unknown } | undefined)?.protocol;
  const protocol =
    typeof chosen === 'string' ? chosen : (c.req.header('sec-websocket-protocol')?.split(',')[0]?.trim() ?? '');
  const upgraded = server.upgrade(c.req.raw, {
    data: { events, url: new URL(c.req.url), protocol },
    ...(typeof chosen === 'string' ? { headers: { 'Sec-WebSocket-Protocol': chosen } } : {}),
  });
  return upgraded ? new Response(null) : undefined;
});
