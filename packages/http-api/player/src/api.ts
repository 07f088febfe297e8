/** The slice of the server's JSON the player reads (see packages/http-api/README.md for the full shapes). */

export interface BagSummary {
  id: string;
  format: string;
  size: number;
  modified: string;
  messageCount: number | null;
  error?: { code: string; message: string };
}

export interface UrlMeta {
  index: number;
  url: string;
  type: string;
  action?: string;
  ser: string;
  schemaType: number;
  count: number;
  size: number;
  loss: number;
  freq: number;
  /** Foreign formats (and `.vcap` files that declare one): the payload encoding (`ros1`, `cdr`, `json`, …). */
  encoding?: string;
}

export interface Info {
  path: string;
  format: string;
  version: string;
  storageType: string;
  messageCount: number;
  totalDuration: number;
  blankDuration: number;
  compressionType: string;
  processName: string;
  dateTime: string;
  tagName: string;
  hasCompleted: boolean;
  timezone: number;
  startTimestamp: number;
  splitCount: number;
  totalRawSize: number;
  fileSize: number;
  urls: UrlMeta[];
  /** Counters by cause, url → cause → count (drops the writer saw and causes the application counted). */
  counters?: Record<string, Record<string, number>>;
}

export interface Gap {
  startUs: number;
  lengthUs: number;
}

export interface UrlTiming {
  url: string;
  /** A stream is a url AND an action: an RPC url has one entry for requests and one for responses. */
  action: string | null;
  count: number;
  rateHz: number;
  intervalUs: { min: number; p50: number; p99: number; max: number } | null;
  gaps: Gap[];
}

export interface Timing {
  factor: number;
  urls: UrlTiming[];
}

/** A histogram from `/report`: counts[i] in [edges[i], edges[i+1]); `over`: beyond the last edge. */
export interface Histogram {
  edges: number[];
  counts: number[];
  under: number;
  over: number;
}

type Spread = { min: number; p50: number; p99: number; max: number } | null;

/** `/report`: core's BagReport. */
export interface Report {
  semantics: number;
  streams: Array<{
    url: string;
    action: string;
    count: number;
    rateHz: number;
    intervalUs: Spread;
    intervalHistogram: Histogram | null;
    time: 'log' | 'publish' | 'mixed';
    latencyUs: Spread;
  }>;
  groups: Array<{
    source: 'given' | 'shared';
    reference: string;
    toleranceUs: number;
    members: Array<{
      url: string;
      matched: number;
      unmatched: number;
      exact: number;
      offsetUs: Spread;
      offsetHistogram: Histogram | null;
    }>;
  }>;
  counters: Record<string, Record<string, number>>;
  errors: string[];
}

export interface Density {
  beginMs: number;
  endMs: number;
  buckets: number;
  bucketMs: number;
  total: number;
  urls: Array<{ url: string; count: number; max: number; counts: number[] }>;
}

export interface SchemaJson {
  name: string;
  encoding: string;
  schemaType: number;
  data: string;
}

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
