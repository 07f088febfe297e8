import { badParameter } from '../http/errors.js';
import { fromBase64Url, toBase64Url } from '../messages/base64.js';

/**
 * The order of `GET /v1/bags`: ids compared folder by folder, each name by UTF-16 code units, a folder's bags at the
 * place of its name. That is the order the folder walk produces (names sorted per folder, depth first), so a listing
 * that never pages keeps the order it always had; sorting by it explicitly makes the order a total one a cursor can
 * resume from. Compared as strings in which `/` sorts before every other character: `a/x.vdb` < `a.vdb` < `b`.
 */
export function compareIds(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x === SLASH) return -1;
    if (y === SLASH) return 1;
    return x - y;
  }
  return a.length - b.length;
}

const SLASH = 0x2f;

/** Where a page of the listing ended: the last id it returned, and the walk it was cut from. */
export interface ListPosition {
  /** Last id returned: the next page starts after it (keyset paging, so a token survives restarts). */
  after: string;
  /**
   * The walk (snapshot) the page came from, so the following pages reuse it instead of walking the tree again. Only a
   * hint: when the server no longer holds it, the tree is walked again and the listing continues after `after`.
   */
  walk: number;
}

interface TokenBody {
  v: 1;
  k: 'bags';
  a: string;
  w: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Opaque, URL-safe token for the next page of the listing (base64url of a small JSON document). */
export function encodeListCursor(position: ListPosition): string {
  const body: TokenBody = { v: 1, k: 'bags', a: position.after, w: position.walk };
  return toBase64Url(encoder.encode(JSON.stringify(body)));
}

export function decodeListCursor(token: string): ListPosition {
  let body: TokenBody;
  try {
    body = JSON.parse(decoder.decode(fromBase64Url(token))) as TokenBody;
  } catch {
    throw badParameter('cursor', 'not a token issued by this API');
  }
  const valid =
    body?.v === 1 &&
    body.k === 'bags' &&
    typeof body.a === 'string' &&
    body.a.length > 0 &&
    Number.isSafeInteger(body.w) &&
    body.w >= 0;
  if (!valid) throw badParameter('cursor', 'malformed token');
  return { after: body.a, walk: body.w };
}

/** Index of the first of `ids` (sorted by compareIds) that comes after `after`. */
export function firstAfter<T>(sorted: readonly T[], idOf: (item: T) => string, after: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareIds(idOf(sorted[mid]!), after) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
