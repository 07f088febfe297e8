import type { MiddlewareHandler } from 'hono';
import { HttpError } from './errors.js';

/** A name a client may reach the server by, with its port (undefined = any port). */
export interface HostName {
  name: string;
  port?: number;
}

/**
 * Who may talk to the server. `hosts`: the `Host` header must name one of them (undefined = no check: an app without
 * a known address, e.g. behind someone else's server). `origins`: browser origins besides the server's own.
 * `anyOrigin`: plain HTTP requests from any origin are accepted (CORS `*`, allowed only with a token); WebSocket
 * upgrades still need the server's own origin or a listed one.
 */
export interface RequestPolicy {
  hosts: (() => readonly HostName[]) | undefined;
  origins: ReadonlySet<string>;
  anyOrigin: boolean;
}

/**
 * Refuses requests a browser was tricked into sending:
 * - a `Host` the server does not answer to (DNS rebinding: `evil.example` resolving to 127.0.0.1 makes the page
 *   same-origin with us; the Host header still says `evil.example`) → 421;
 * - an `Origin` that is neither the server's own nor allowed (a page elsewhere calling the API or opening the replay
 *   WebSocket, which browsers never restrict by origin) → 403. Requests without `Origin` (curl, SDKs, navigation) pass.
 */
export function requestGuard(policy: RequestPolicy): MiddlewareHandler {
  return async (c, next) => {
    const host = c.req.header('host');
    if (policy.hosts) {
      const allowed = policy.hosts();
      if (host === undefined || !hostAllowed(host, allowed))
        throw new HttpError(
          'MISDIRECTED_REQUEST',
          `this server does not answer to host ${JSON.stringify(host ?? '')}; start it with --allow-host <name> to add a name`,
        );
    }
    const origin = c.req.header('origin');
    if (origin !== undefined) {
      const upgrade = c.req.header('upgrade')?.toLowerCase() === 'websocket';
      if (!originAllowed(origin, host, policy, upgrade))
        throw new HttpError(
          'FORBIDDEN',
          `requests from origin ${JSON.stringify(origin)} are not allowed; start the server with --allow-origin ${origin} to allow them`,
        );
    }
    return next();
  };
}

export function originAllowed(
  origin: string,
  host: string | undefined,
  policy: RequestPolicy,
  upgrade: boolean,
): boolean {
  const normalized = normalizeOrigin(origin);
  if (normalized !== undefined && policy.origins.has(normalized)) return true;
  if (origin !== 'null' && host !== undefined) {
    try {
      if (new URL(origin).host === new URL(`http://${host}`).host) return true;
    } catch {
      // not a URL: foreign
    }
  }
  return !upgrade && policy.anyOrigin;
}

/** `https://App.Example:443/` → `https://app.example`; `null` stays `null`; undefined when it is not an origin. */
export function normalizeOrigin(origin: string): string | undefined {
  const trimmed = origin.trim();
  if (trimmed === 'null') return 'null';
  try {
    const url = new URL(trimmed);
    if (url.origin === 'null') return undefined;
    return url.origin.toLowerCase();
  } catch {
    return undefined;
  }
}

export function hostAllowed(header: string, allowed: readonly HostName[]): boolean {
  const parsed = parseHost(header);
  if (!parsed) return false;
  return allowed.some((h) => h.name === parsed.name && (h.port === undefined || h.port === parsed.port));
}

/** `Host` header → lower-case name (IPv6 in brackets) and port (80 when absent, as for http). */
export function parseHost(header: string): { name: string; port: number } | undefined {
  try {
    const url = new URL(`http://${header.trim()}`);
    if (url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
    return { name: url.hostname.toLowerCase(), port: url.port === '' ? 80 : Number(url.port) };
  } catch {
    return undefined;
  }
}

/** `name` or `name:port` (IPv6 as `[::1]:8765`) as the user wrote it in `allowHosts` / `--allow-host`. */
export function parseHostName(text: string): HostName {
  const parsed = /:\d+$/.test(text.trim()) ? parseHost(text) : parseHost(`${text.trim()}:1`);
  if (!parsed) throw new Error(`not a host name: ${JSON.stringify(text)}`);
  return /:\d+$/.test(text.trim()) ? parsed : { name: parsed.name };
}
