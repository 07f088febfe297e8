import { badParameter } from '../http/errors.js';
import { fromBase64Url, toBase64Url } from './base64.js';

/** The window a query reads: µs since recording start, both inclusive; urls undefined = all. */
export interface MessageQuery {
  urls?: string[];
  beginUs?: number;
  endUs?: number;
  /** `publish`: begin/end apply to publish times (format reference §1.3); absent: to log times. */
  timeBase?: 'publish';
}

/**
 * Where a page ended, as data rather than server memory, so a token survives restarts and works on any replica:
 * the last timestamp returned, how many frames with exactly that timestamp were returned (frames sharing a timestamp
 * are read in a stable order), and the running count, which is the position in the query's read order: a query not
 * read in timestamp order (an MCAP file in file order) resumes by it (`QueryCursor`).
 */
export interface Position {
  /** Last timestamp returned (µs; negative in a bag that holds times before its start). */
  t: number;
  /** Frames with timestamp `t` already returned. */
  k: number;
  /** Frames returned so far by this query: the position in its read order. */
  n: number;
}

interface TokenBody {
  v: 1;
  /** The bag id, so a token is not replayed against another bag by mistake. */
  id: string;
  q: MessageQuery;
  p: Position;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Opaque, URL-safe token for the next page (base64url of a small JSON document, version 1). */
export function encodeCursor(id: string, query: MessageQuery, position: Position): string {
  const body: TokenBody = { v: 1, id, q: query, p: position };
  return toBase64Url(encoder.encode(JSON.stringify(body)));
}

const isCount = (x: unknown): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
const isTime = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
/** A position's time may be negative: readers return the times a file holds, and paging must get past them. */
const isTimestamp = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

export function decodeCursor(token: string, id: string): { query: MessageQuery; position: Position } {
  let body: TokenBody;
  try {
    body = JSON.parse(decoder.decode(fromBase64Url(token))) as TokenBody;
  } catch {
    throw badParameter('cursor', 'not a token issued by this API');
  }
  const { q, p } = body ?? ({} as TokenBody);
  const valid =
    body?.v === 1 &&
    typeof body.id === 'string' &&
    typeof q === 'object' &&
    q !== null &&
    (q.urls === undefined || (Array.isArray(q.urls) && q.urls.every((u) => typeof u === 'string'))) &&
    (q.beginUs === undefined || isTime(q.beginUs)) &&
    (q.endUs === undefined || isTime(q.endUs)) &&
    (q.timeBase === undefined || q.timeBase === 'publish') &&
    typeof p === 'object' &&
    p !== null &&
    isTimestamp(p.t) &&
    isCount(p.k) &&
    isCount(p.n);
  if (!valid) throw badParameter('cursor', 'malformed token');
  if (body.id !== id) throw badParameter('cursor', 'token belongs to another bag');
  const query: MessageQuery = {};
  if (q.urls !== undefined) query.urls = q.urls;
  if (q.beginUs !== undefined) query.beginUs = q.beginUs;
  if (q.endUs !== undefined) query.endUs = q.endUs;
  if (q.timeBase === 'publish') query.timeBase = 'publish';
  return { query, position: { t: p.t, k: p.k, n: p.n } };
}

export function sameQuery(a: MessageQuery, b: MessageQuery): boolean {
  const urls = (q: MessageQuery) => (q.urls ? [...q.urls].sort().join('\n') : undefined);
  return a.beginUs === b.beginUs && a.endUs === b.endUs && a.timeBase === b.timeBase && urls(a) === urls(b);
}
