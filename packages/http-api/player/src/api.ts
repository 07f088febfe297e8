/**
 * The server's JSON answers, as the route schemas declare them (types only: nothing of the server is bundled). See
 * packages/http-api/README.md and `/v1/openapi.json` for the full shapes.
 */
export type {
  BagSummary,
  Density,
  Gap,
  Histogram,
  Info,
  Report,
  SchemaJson,
  Timing,
  UrlMeta,
} from '../../src/http/wire-types.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const TOKEN_KEY = 'vlink-bag-token';

/**
 * The bearer token, if the server has one: from `#token=…` once (then removed from the address bar) or typed into
 * the page; kept in sessionStorage only, so it leaves with the tab.
 */
export function token(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value: string): void {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export const bagPath = (id: string) => `/v1/bags/${encodeURIComponent(id)}`;

export async function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const t = token();
  if (t) headers.authorization = `Bearer ${t}`;
  const res = await fetch(path, { headers, ...(signal ? { signal } : {}) });
  if (!res.ok) {
    let code = `HTTP_${res.status}`;
    let message = res.statusText;
    try {
      const body = (await res.json()) as { error?: { code: string; message: string } };
      if (body.error) ({ code, message } = body.error);
    } catch {
      // not JSON: keep the status line
    }
    throw new ApiError(res.status, code, message);
  }
  return (await res.json()) as T;
}

/** Browsers cannot set headers on a WebSocket, so the server accepts `?token=` on upgrades. */
export function replayUrl(id: string): string {
  const url = new URL(`${bagPath(id)}/replay`, location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  const t = token();
  if (t) url.searchParams.set('token', t);
  return url.href;
}
