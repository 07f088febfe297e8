import type { Info } from '../model/info.js';
import type { JsonValue } from './json-dump.js';
import type { ManifestFlavor } from './manifest.js';

/**
 * What the manifest says one segment holds (vlink-bag's `VLinkBagSegments`, format reference §4.1): enough for the
 * recording's `Info` and for time and url seeks without opening the segment. A reader that opens the segment holds
 * these facts against it (`factsDisagreement`): a manifest that lies is a `CORRUPT_FILE`, and `check` reports it.
 */
export interface SegmentFacts {
  /** The segment's file name, as in `VLinkFiles` (same order). */
  file: string;
  /** The segment's own `start_timestamp` as written in its header, ms since the epoch. */
  startTimestamp: number;
  /** Frames in the segment. */
  count: number;
  /** First and last log time in the segment, µs since the manifest's `start_timestamp`; 0 when `count` is 0. */
  begin: number;
  end: number;
  /** The segment embeds at least one schema (`Info.hasSchema`). */
  hasSchema: boolean;
  /** Per url (by `VLinkUrls` index; `.vcapx`: per (url, action) pair): frames and accounted bytes in the segment. */
  urls: SegmentUrlFacts[];
  /** The drop counters the segment stores (`Info.counters`); absent when it stores none. */
  counters?: Record<string, Record<string, number>>;
}

export interface SegmentUrlFacts {
  index: number;
  count: number;
  size: number;
}

/** The facts as the manifest writes them: `VLinkBagSegments[i]`, keys in this order. */
export function segmentFactsJson(facts: SegmentFacts): { [key: string]: JsonValue } {
  return {
    file: facts.file,
    start_timestamp: facts.startTimestamp,
    count: facts.count,
    begin: facts.begin,
    end: facts.end,
    schema: facts.hasSchema,
    urls: facts.urls.map((u) => ({ index: u.index, count: u.count, size: u.size })),
    ...(facts.counters ? { counters: facts.counters } : {}),
  };
}

/**
 * `VLinkBagSegments` of a parsed manifest: undefined when the key is absent (VLink's manifests, older vlink-bag ones).
 * An entry that cannot be true (a missing or negative count, a time that is no integer, a file that is not the
 * `VLinkFiles` entry at its place) is noted in `problems` and the whole list is not used: readers then open the
 * segments to learn what they hold, as without the key.
 */
export function parseSegmentFacts(
  value: unknown,
  files: readonly string[],
  problems: string[],
): SegmentFacts[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    problems.push('VLinkBagSegments is not an array');
    return undefined;
  }
  if (value.length !== files.length) {
    problems.push(`VLinkBagSegments has ${value.length} entries, VLinkFiles ${files.length}`);
    return undefined;
  }
  const out: SegmentFacts[] = [];
  for (const [i, entry] of value.entries()) {
    const where = `VLinkBagSegments[${i}]`;
    const facts = parseEntry(entry);
    if (typeof facts === 'string') {
      problems.push(`${where} ${facts}`);
      return undefined;
    }
    if (facts.file !== files[i]) {
      problems.push(`${where} names ${JSON.stringify(facts.file)}, VLinkFiles[${i}] is ${JSON.stringify(files[i])}`);
      return undefined;
    }
    out.push(facts);
  }
  return out;
}

function parseEntry(entry: unknown): SegmentFacts | string {
  if (!isObject(entry)) return 'is not an object';
  const file = entry['file'];
  if (typeof file !== 'string') return 'has no file name';
  const startTimestamp = entry['start_timestamp'];
  if (!isInteger(startTimestamp)) return 'start_timestamp is not an integer';
  const count = entry['count'];
  if (!isCount(count)) return 'count is not a count';
  const begin = entry['begin'];
  const end = entry['end'];
  if (!isCount(begin) || !isCount(end) || end < begin) return 'begin/end are not a time span in µs';
  const schema = entry['schema'];
  if (typeof schema !== 'boolean') return 'schema is not a boolean';
  const urlsValue = entry['urls'];
  if (!Array.isArray(urlsValue)) return 'urls is not an array';
  const urls: SegmentUrlFacts[] = [];
  for (const u of urlsValue) {
    if (!isObject(u) || !isCount(u['index']) || !isCount(u['count']) || !isCount(u['size']))
      return 'urls holds an entry without index, count and size';
    urls.push({ index: u['index'], count: u['count'], size: u['size'] });
  }
  const listed = urls.reduce((sum, u) => sum + u.count, 0);
  if (listed !== count) return `urls count ${listed} frames in total, not ${count}`;
  const counters = entry['counters'];
  const facts: SegmentFacts = { file, startTimestamp, count, begin, end, hasSchema: schema, urls };
  if (counters !== undefined) {
    if (!isCounterTable(counters)) return 'counters is not a table url → cause → count';
    facts.counters = counters;
  }
  return facts;
}

/** What a reader of the segment would report, derived from the facts (format reference §4.4, §5.4 step 5). */
export interface DerivedSegment {
  /** The segment's start as its reader reports it: lowered to its first message when that comes earlier. */
  startTimestamp: number;
  /** ms from the segment's start to its first and last message (0 for an empty segment). */
  blankDuration: number;
  totalDuration: number;
}

/** `Info` values of the segment, from the facts and the manifest's start (ms since the epoch). */
export function deriveSegment(facts: SegmentFacts, manifestStart: number): DerivedSegment {
  if (facts.count === 0) return { startTimestamp: facts.startTimestamp, blankDuration: 0, totalDuration: 0 };
  const firstMs = manifestStart + Math.floor(facts.begin / 1000);
  const lastMs = manifestStart + Math.floor(facts.end / 1000);
  const startTimestamp = Math.min(facts.startTimestamp, firstMs);
  return {
    startTimestamp,
    blankDuration: firstMs - startTimestamp,
    totalDuration: Math.max(0, lastMs - startTimestamp),
  };
}

/**
 * How an opened segment contradicts the manifest's facts about it, undefined when it does not: its count, start,
 * first and last message (to the ms its reader reports), schemas, drop counters and every url's count and size.
 * `urlKey` names a `VLinkUrls` index as `urlKeyOf` keys the segment's urls (`.vcapx`: url and action).
 */
export function factsDisagreement(
  facts: SegmentFacts,
  info: Info,
  manifestStart: number,
  urlKey: (index: number) => string | undefined,
  flavor: ManifestFlavor,
): string | undefined {
  if (info.messageCount !== facts.count)
    return `the manifest says ${facts.count} frames, the segment holds ${info.messageCount}`;
  const derived = deriveSegment(facts, manifestStart);
  if (info.startTimestamp !== derived.startTimestamp)
    return `the manifest says it starts at ${derived.startTimestamp} ms, the segment at ${info.startTimestamp} ms`;
  if (facts.count > 0 && info.blankDuration !== derived.blankDuration)
    return `the manifest says its first frame is at ${derived.blankDuration} ms, the segment's is at ${info.blankDuration} ms`;
  if (info.totalDuration !== derived.totalDuration)
    return `the manifest says it ends at ${derived.totalDuration} ms, the segment at ${info.totalDuration} ms`;
  if (info.hasSchema !== facts.hasSchema)
    return `the manifest says it ${facts.hasSchema ? 'embeds' : 'has no'} schemas, the segment ${info.hasSchema ? 'embeds some' : 'has none'}`;
  if (canonicalCounters(info.counters) !== canonicalCounters(facts.counters))
    return 'the manifest and the segment disagree on the drop counters';
  const held = new Map<string, { count: number; size: number }>();
  for (const u of info.urls) {
    if (u.count === 0) continue;
    const key = urlKeyOf(u, flavor);
    const c = held.get(key) ?? { count: 0, size: 0 };
    c.count += u.count;
    c.size += u.size;
    held.set(key, c);
  }
  for (const u of facts.urls) {
    const key = urlKey(u.index);
    if (key === undefined) return `the manifest's VLinkUrls has no index ${u.index}`;
    const c = held.get(key);
    held.delete(key);
    if ((c?.count ?? 0) !== u.count || (c?.size ?? 0) !== u.size)
      return `the manifest says ${u.count} frames (${u.size} bytes) of ${key.replace('\x1f', ' ')}, the segment holds ${c?.count ?? 0} (${c?.size ?? 0} bytes)`;
  }
  for (const [key, c] of held)
    return `the segment holds ${c.count} frames of ${key.replace('\x1f', ' ')}, the manifest none`;
  return undefined;
}

/** A url's key across segments: the url (`.vdbx`), or url and action (`.vcapx`, one channel per pair). */
export function urlKeyOf(u: { url: string; action?: string }, flavor: ManifestFlavor): string {
  return flavor === 'vcapx' ? `${u.url}\x1f${u.action ?? 'Unknown'}` : u.url;
}

/** A counter table as text with sorted keys (readers list urls in their own order). */
function canonicalCounters(table: Record<string, Record<string, number>> | undefined): string {
  if (!table) return '';
  return JSON.stringify(
    Object.keys(table)
      .sort()
      .map((url) => [url, Object.entries(table[url]!).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]),
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

function isCount(value: unknown): value is number {
  return isInteger(value) && value >= 0;
}

function isCounterTable(value: unknown): value is Record<string, Record<string, number>> {
  return (
    isObject(value) && Object.values(value).every((causes) => isObject(causes) && Object.values(causes).every(isCount))
  );
}
