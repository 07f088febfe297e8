import { HttpError } from '../http/errors.js';
import type { WebSocketSupport } from './socket.js';

/** A header as the routes read it (hono's `c.req.header`). */
export type HeaderOf = (name: string) => string | undefined;

/** RFC 7230 token: what a subprotocol name may be. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A `Sec-WebSocket-Key`: 16 bytes in base64 (RFC 6455 §4.1). */
const KEY = /^[+/0-9A-Za-z]{22}==$/;

/** The comma-separated tokens of a header, trimmed; empty ones dropped. */
function tokens(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

/**
 * Checks a WebSocket handshake before a route upgrades it, so every runtime refuses a bad one the same way, with a
 * typed JSON error: no `Upgrade: websocket` is 426 `UPGRADE_REQUIRED`; an incomplete or malformed handshake (no
 * `Connection: Upgrade`, a missing or malformed key, a version other than 13, a subprotocol list that is no list of
 * tokens, a method other than GET) is 400 `INVALID_ARGUMENT`. Left to the runtimes, Deno's upgrade throws (a 500), Node's answers 200 with an
 * empty body (the request never reaches its upgrade path) or an empty 400, and each words it differently.
 */
export function assertHandshake(method: string, header: HeaderOf): void {
  if (header('upgrade')?.toLowerCase() !== 'websocket')
    throw new HttpError('UPGRADE_REQUIRED', 'this is a WebSocket endpoint');
  const bad = (what: string) => new HttpError('INVALID_ARGUMENT', `malformed WebSocket handshake: ${what}`);
  if (method !== 'GET') throw bad(`it is a GET, not a ${method}`);
  if (!tokens(header('connection')).some((t) => t.toLowerCase() === 'upgrade'))
    throw bad('the Connection header must contain "Upgrade"');
  if (!KEY.test(header('sec-websocket-key')?.trim() ?? '')) throw bad('Sec-WebSocket-Key must be 16 bytes in base64');
  if (header('sec-websocket-version')?.trim() !== '13') throw bad('Sec-WebSocket-Version must be 13');
  const offered = header('sec-websocket-protocol');
  if (offered !== undefined) {
    const list = offered.split(',').map((part) => part.trim());
    if (!list.every((p) => TOKEN.test(p)) || new Set(list).size !== list.length)
      throw bad('Sec-WebSocket-Protocol must be a list of distinct tokens');
  }
}

/** The subprotocols a client offers (`Sec-WebSocket-Protocol`), in its order. */
export function offeredProtocols(header: HeaderOf): string[] {
  return tokens(header('sec-websocket-protocol'));
}

/**
 * The options of one upgrade: the runtime's own plus the subprotocol the server answers with. Every adapter honours
 * `protocol` (Deno natively, Node and Bun in `node-upgrade.ts`, `bun-upgrade.ts`); without it the runtimes echo the
 * client's first offer, which need not be the protocol the route speaks.
 */
export function upgradeOptionsFor(support: WebSocketSupport, protocol: string | undefined): unknown {
  if (protocol === undefined) return support.upgradeOptions;
  return { ...(support.upgradeOptions as object | undefined), protocol };
}
