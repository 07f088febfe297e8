import type { BagReader } from '@vlink/bag';
import { HttpError } from '../http/errors.js';

/** Per-url message counts over equal time buckets: what a timeline draws instead of the messages themselves. */
export interface Density {
  /** Window start and end, ms since recording start (end inclusive). */
  beginMs: number;
  endMs: number;
  buckets: number;
  /** Width of one bucket in ms: bucket `i` covers `[beginMs + i·bucketMs, beginMs + (i+1)·bucketMs)`, the last one closed. */
  bucketMs: number;
  /** Messages in the window. */
  total: number;
  /** Sorted by url. `max` is the largest bucket of the url (what a renderer scales to). */
  urls: Array<{ url: string; count: number; max: number; counts: number[] }>;
}

export interface DensityOptions {
  buckets: number;
  beginMs: number;
  endMs: number;
  /** Urls to count; undefined = all. Listed urls with no message in the window are reported with zeros. */
  urls?: readonly string[];
  signal?: AbortSignal;
  /**
   * Most urls counted (memory is `urls × buckets` counters): a bag whose frames name more urls fails with 413
   * instead of growing without bound. Default: no limit.
   */
  maxUrls?: number;
}

/**
 * Counts a window's messages per url and bucket in one streaming pass over the reader: memory is `urls × buckets`
 * counters whatever the number of messages, and nothing but a timestamp and a url is looked at per frame.
 */
export async function computeDensity(reader: BagReader, options: DensityOptions): Promise<Density> {
  const { buckets, beginMs, endMs, urls, signal } = options;
  const maxUrls = options.maxUrls ?? Number.POSITIVE_INFINITY;
  const tooMany = () =>
    new HttpError(
      'TOO_LARGE',
      `density over more than ${maxUrls} urls at ${buckets} buckets is over the limit of ${maxUrls * buckets} cells; ask for fewer buckets or fewer urls`,
    );
  if ((urls?.length ?? 0) > maxUrls) throw tooMany();
  const beginUs = Math.round(beginMs * 1000);
  const spanUs = Math.max(1, Math.round(endMs * 1000) - beginUs);
  const scale = buckets / spanUs;
  const last = buckets - 1;
  const byUrl = new Map<string, Uint32Array>();
  for (const url of urls ?? []) byUrl.set(url, new Uint32Array(buckets));
  let total = 0;
  // One entry per url seen: a Map lookup per frame is the whole cost beside reading.
  let lastUrl = '';
  let lastCounts: Uint32Array | undefined;
  const frames = reader.frames({
    beginTime: beginMs,
    // CursorConfig reads endTime 0 as "to the end"; an explicit window ending at 0 ms is that one instant.
    endTime: endMs > 0 ? endMs : 1e-3,
    ...(urls && urls.length > 0 ? { filterUrls: urls } : {}),
    ...(signal ? { signal } : {}),
  });
  for await (const frame of frames) {
    let counts = frame.url === lastUrl ? lastCounts : byUrl.get(frame.url);
    if (!counts) {
      if (byUrl.size >= maxUrls) throw tooMany();
      byUrl.set(frame.url, (counts = new Uint32Array(buckets)));
    }
    lastUrl = frame.url;
    lastCounts = counts;
    const i = Math.floor((frame.timestamp - beginUs) * scale);
    counts[Math.max(0, Math.min(i, last))]!++;
    total++;
  }
  const out: Density['urls'] = [];
  for (const url of [...byUrl.keys()].sort()) {
    const counts = byUrl.get(url)!;
    let count = 0;
    let max = 0;
    for (const c of counts) {
      count += c;
      if (c > max) max = c;
    }
    out.push({ url, count, max, counts: Array.from(counts) });
  }
  return { beginMs, endMs, buckets, bucketMs: spanUs / 1000 / buckets, total, urls: out };
}
