import { badParameter } from './errors.js';
import type { MessageQuery } from '../messages/cursor-token.js';

/**
 * urls (repeated and/or comma-separated, trimmed), url (repeated, each exact), begin/end ms, timeBase → a query in µs;
 * end before begin is a 400 naming `end`.
 */
export function messageQuery(q: {
  urls?: string | string[] | undefined;
  url?: string | string[] | undefined;
  begin?: string | undefined;
  end?: string | undefined;
  timeBase?: string | undefined;
}): MessageQuery {
  const query: MessageQuery = {};
  if (q.timeBase !== undefined && q.timeBase !== 'log' && q.timeBase !== 'publish')
    throw badParameter('timeBase', 'log or publish');
  if (q.timeBase === 'publish') query.timeBase = 'publish';
  if (q.urls !== undefined) {
    const urls = (Array.isArray(q.urls) ? q.urls : [q.urls])
      .flatMap((u) => u.split(','))
      .map((u) => u.trim())
      .filter((u) => u.length > 0);
    if (urls.length > 0) query.urls = urls;
  }
  if (q.url !== undefined)
    query.urls = [...new Set([...(query.urls ?? []), ...(Array.isArray(q.url) ? q.url : [q.url])])];
  if (q.begin !== undefined) query.beginUs = Math.round(Number(q.begin) * 1000);
  if (q.end !== undefined) query.endUs = Math.round(Number(q.end) * 1000);
  if (query.beginUs !== undefined && query.endUs !== undefined && query.endUs < query.beginUs)
    throw badParameter('end', 'before begin');
  return query;
}

/** A non-negative number from the query string, or undefined when absent; 400 naming the parameter otherwise. */
export function optionalNumber(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(text)) throw badParameter(name, 'a number ≥ 0');
  return Number(text);
}
