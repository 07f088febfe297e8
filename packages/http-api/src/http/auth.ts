import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.js';

/** Paths anyone may call even when a token is set. */
const PUBLIC_PATHS = new Set(['/v1/health']);

/** The WebSocket endpoints: the only routes where a browser cannot send a header, so `?token=` is accepted there. */
const WEBSOCKET_ROUTE = /^\/v1\/bags\/[^/]+\/(?:replay|foxglove)$/;

const encoder = new TextEncoder();

/**
 * Compares in time independent of the contents and of the lengths: both sides are hashed (SHA-256, Web Crypto, so
 * the same code runs on Node, Bun and Deno) and the digests compared with XOR, so neither a differing byte nor a
 * differing length shows in the timing.
 */
export async function sameSecret(offered: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(offered)),
    crypto.subtle.digest('SHA-256', encoder.encode(expected)),
  ]);
  const x = new Uint8Array(a);
  const y = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}

/** A real WebSocket handshake on a WebSocket route: GET, `Upgrade: websocket`, `Connection: upgrade`. */
function isWebSocketUpgrade(method: string, path: string, header: (name: string) => string | undefined): boolean {
  return (
    method === 'GET' &&
    WEBSOCKET_ROUTE.test(path) &&
    header('upgrade')?.toLowerCase() === 'websocket' &&
    (header('connection') ?? '')
      .toLowerCase()
      .split(',')
      .some((part) => part.trim() === 'upgrade')
  );
}

/**
 * `Authorization: Bearer <token>` on every route but health. A real WebSocket upgrade of the replay and Foxglove
 * routes may pass `?token=` instead, because browsers cannot set headers on a WebSocket; anywhere else `?token=` is
 * ignored (a token in a URL ends up in logs and histories, so it is accepted only where nothing else works).
 */
export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const header = c.req.header('authorization');
    let offered: string | undefined;
    if (header !== undefined) {
      const match = /^Bearer\s+(.+)$/i.exec(header.trim());
      offered = match?.[1];
    } else if (isWebSocketUpgrade(c.req.method, c.req.path, (name) => c.req.header(name))) {
      offered = c.req.query('token');
    }
    if (offered === undefined || !(await sameSecret(offered, token))) {
      c.header('WWW-Authenticate', 'Bearer realm="vlink-bag"');
      throw new HttpError('UNAUTHORIZED', offered === undefined ? 'missing bearer token' : 'invalid bearer token');
    }
    return next();
  };
}
