import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.js';

/** Paths anyone may call even when a token is set. */
const PUBLIC_PATHS = new Set(['/v1/health']);

/** Compares in time independent of where the strings differ, so the token cannot be guessed byte by byte. */
function sameSecret(a: string, b: string): boolean {
  const enc = new TextEncoder();
  const x = enc.encode(a);
  const y = enc.encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    diff |= (x[i % (x.length || 1)] ?? 0) ^ (y[i % (y.length || 1)] ?? 0);
  return diff === 0;
}

/**
 * `Authorization: Bearer <token>` on every route but health. WebSocket upgrades may pass `?token=` instead, because
 * browsers cannot set headers on a WebSocket.
 */
export function bearerAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (PUBLIC_PATHS.has(c.req.path)) return next();
    const header = c.req.header('authorization');
    let offered: string | undefined;
    if (header !== undefined) {
      const match = /^Bearer\s+(.+)$/i.exec(header.trim());
      offered = match?.[1];
    } else if (c.req.header('upgrade')?.toLowerCase() === 'websocket') {
      offered = c.req.query('token');
    }
    if (offered === undefined || !sameSecret(offered, token)) {
      c.header('WWW-Authenticate', 'Bearer realm="vlink-bag"');
      throw new HttpError('UNAUTHORIZED', offered === undefined ? 'missing bearer token' : 'invalid bearer token');
    }
    return next();
  };
}
