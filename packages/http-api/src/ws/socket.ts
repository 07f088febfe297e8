import type { UpgradeWebSocket, WSContext } from 'hono/ws';

/**
 * What a runtime adapter gives the app so it can serve WebSockets: hono's `upgradeWebSocket` for that runtime, and
 * how to read a socket's queued bytes (the backpressure signal), which every runtime names differently.
 */
export interface WebSocketSupport {
  // biome-ignore lint/suspicious/noExplicitAny: each runtime's adapter types its socket and event differently; the app only passes them through
  upgradeWebSocket: UpgradeWebSocket<any, any>;
  /** Bytes accepted by `send` but not yet written to the socket. Default: `raw.bufferedAmount` / `raw.getBufferedAmount()`. */
  bufferedAmount?(ws: WSContext<unknown>): number;
  /** Options passed to `upgradeWebSocket` (e.g. Deno's `idleTimeout`). */
  upgradeOptions?: unknown;
}

/** `ws` (Node) and browser-style sockets (Deno) expose `bufferedAmount`; Bun's ServerWebSocket `getBufferedAmount()`. */
export function defaultBufferedAmount(ws: WSContext<unknown>): number {
  const raw = ws.raw as { bufferedAmount?: number; getBufferedAmount?: () => number } | undefined;
  if (!raw) return 0;
  if (typeof raw.getBufferedAmount === 'function') return raw.getBufferedAmount();
  return typeof raw.bufferedAmount === 'number' ? raw.bufferedAmount : 0;
}

export const OPEN = 1;

/** Decodes a received message as text; undefined for binary messages. */
export function messageText(data: unknown): string | undefined {
  return typeof data === 'string' ? data : undefined;
}

/** Sends when the socket is open; a message to a closing socket is dropped (its session is ending anyway). */
export function sendIfOpen(ws: WSContext<unknown>, data: string | Uint8Array): void {
  if (ws.readyState !== OPEN) return;
  ws.send(data as string | Uint8Array<ArrayBuffer>);
}
