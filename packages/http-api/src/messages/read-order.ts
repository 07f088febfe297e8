import type { BagReader } from '@vlink/bag';
import type { MessageQuery } from './cursor-token.js';

/** The options of `BagReader.frames` for a query, optionally opened at `seekUs` (µs) instead of the query's begin. */
export function framesOptions(query: MessageQuery, seekUs?: number, signal?: AbortSignal) {
  const publish = query.timeBase === 'publish';
  // A publish window is not a log window: a log seek would skip frames the window holds.
  const beginUs = publish || seekUs === undefined ? (query.beginUs ?? 0) : Math.max(query.beginUs ?? 0, seekUs);
  const options: Parameters<BagReader['frames']>[0] = {};
  if (query.urls) options.filterUrls = query.urls;
  if (publish) options.timeBase = 'publish';
  // Core takes ms and rounds to µs, so µs/1000 is exact; 0 means "open" there, which QueryCursor handles itself.
  if (beginUs > 0) options.beginTime = beginUs / 1000;
  if (query.endUs !== undefined && query.endUs > 0) options.endTime = query.endUs / 1000;
  if (signal) options.signal = signal;
  return options;
}

/** Verdicts per reader (a pooled reader reads one unchanged file; the store opens a new one when the file changes). */
const verdicts = new WeakMap<BagReader, Map<string, boolean>>();
/** Distinct queries remembered per reader; past that the oldest is forgotten (a client can vary its queries). */
const MAX_QUERIES = 32;

/**
 * Whether a query's frames come in timestamp order: VLink's `.vdb` order (`ORDER BY elapsed, rowid`) and any
 * monotonic recording do, but a `.vcap`/MCAP file is read in file order, which may go back in time (merged sources,
 * late messages; legal), and so is an unindexed `.vdb` (`ORDER BY rowid`). Only a time-ordered query may resume by
 * seeking to a timestamp; any other resumes by counting frames from its start (`QueryCursor`).
 *
 * Answered by reading the query once per reader, stopping at the first step back in time, and remembered: a resumed
 * page pays one read of its query the first time, where counting from the start would pay it on every page.
 */
export async function readsInTimeOrder(reader: BagReader, query: MessageQuery, signal?: AbortSignal): Promise<boolean> {
  const key = JSON.stringify([query.urls ? [...query.urls].sort() : null, query.beginUs, query.endUs, query.timeBase]);
  let known = verdicts.get(reader);
  const cached = known?.get(key);
  if (cached !== undefined) return cached;
  let last = Number.NEGATIVE_INFINITY;
  let ordered = true;
  for await (const frame of reader.frames(framesOptions(query, undefined, signal))) {
    if (frame.timestamp < last) {
      ordered = false;
      break;
    }
    last = frame.timestamp;
  }
  if (!known) verdicts.set(reader, (known = new Map()));
  if (known.size >= MAX_QUERIES) known.delete(known.keys().next().value as string);
  known.set(key, ordered);
  return ordered;
}
