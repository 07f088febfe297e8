import type { SegmentFacts } from './segment-facts.js';

/** Counters of one url (or url + action) in one segment; timestamps µs, −1 when the url has no Pub/Sub/Set/Get. */
export interface UrlCounters {
  count: number;
  /** Accounted (uncompressed) bytes. */
  size: number;
  firstTs: number;
  lastTs: number;
}

/** What a segment holds, keyed by the recording-global url index. */
export interface SegmentStats {
  rows: number;
  /** Largest timestamp written to the segment, µs (≤ 0 when empty). */
  maxTs: number;
  /**
   * Smallest timestamp in the segment, µs (any when empty), and whether it embeds a schema: the manifest's segment
   * facts need both; a segment writer without them gets no facts written (readers then open its segments).
   */
  minTs?: number;
  hasSchema?: boolean;
  urls: ReadonlyMap<number, UrlCounters>;
}

export interface LedgerEntry {
  readonly name: string;
  readonly path: string;
  /** The segment header's `start_timestamp` (ms since the epoch; the recording's start in every segment). */
  readonly startTimestamp: number;
  /** Set when the segment is closed. */
  stats: SegmentStats | undefined;
  /** The drop counters the segment stored when it closed. */
  counters?: Record<string, Record<string, number>>;
}

export interface Totals {
  rows: number;
  maxTs: number;
  urls: Map<number, UrlCounters>;
}

/**
 * The segments a split recording keeps (format reference §4.3 `max_split_count`): oldest first, the open one last. Opening a
 * segment beyond the limit drops the oldest entries and hands them back for deletion; totals are recomputed from the
 * retained segments plus the open one, while the recording's largest timestamp remembers dropped segments too.
 */
export class SegmentLedger {
  private readonly list: LedgerEntry[] = [];
  private maxTsEver = 0;

  /** @param maxSplitCount keep at most this many segments; 0 = unlimited */
  constructor(private readonly maxSplitCount: number) {}

  get entries(): readonly LedgerEntry[] {
    return this.list;
  }

  get current(): LedgerEntry | undefined {
    const last = this.list[this.list.length - 1];
    return last && last.stats === undefined ? last : undefined;
  }

  /** Adds the new open segment; returns the entries dropped to respect `maxSplitCount` (to delete). */
  open(name: string, path: string, startTimestamp = 0): LedgerEntry[] {
    this.list.push({ name, path, startTimestamp, stats: undefined });
    if (this.maxSplitCount <= 0 || this.list.length <= this.maxSplitCount) return [];
    return this.list.splice(0, this.list.length - this.maxSplitCount);
  }

  /** Records the final counters of the open segment (and the drop counters it stored). */
  close(stats: SegmentStats, counters?: Record<string, Record<string, number>>): void {
    const entry = this.current;
    if (!entry) return;
    entry.stats = stats;
    if (counters) entry.counters = counters;
    if (stats.maxTs > this.maxTsEver) this.maxTsEver = stats.maxTs;
  }

  /** Names for `VLinkFiles`: the closed segments, oldest first (the open one is listed only once closed). */
  closedNames(): string[] {
    return this.closed().map((e) => e.name);
  }

  /** The closed segments, oldest first. */
  closed(): LedgerEntry[] {
    return this.list.filter((e) => e.stats !== undefined);
  }

  /** Rows and per-url counters over the retained closed segments plus `open` (the open segment's live counters). */
  totals(open: SegmentStats | undefined): Totals {
    const totals: Totals = { rows: 0, maxTs: this.maxTsEver, urls: new Map() };
    const add = (stats: SegmentStats) => {
      totals.rows += stats.rows;
      if (stats.maxTs > totals.maxTs) totals.maxTs = stats.maxTs;
      for (const [index, c] of stats.urls) {
        const t = totals.urls.get(index);
        if (!t) {
          totals.urls.set(index, { ...c });
          continue;
        }
        t.count += c.count;
        t.size += c.size;
        if (t.firstTs < 0) t.firstTs = c.firstTs;
        if (c.lastTs >= 0) t.lastTs = c.lastTs;
      }
    };
    for (const entry of this.list) if (entry.stats) add(entry.stats);
    if (open) add(open);
    return totals;
  }
}

/** VLink's average rate: count over the first-to-last span in seconds; 0 when the span is not positive. */
export function urlFrequency(c: UrlCounters): number {
  return c.firstTs >= 0 && c.lastTs > c.firstTs ? c.count / ((c.lastTs - c.firstTs) / 1e6) : 0;
}

/** A closed segment's facts from its writer's counters; undefined when the writer does not report them all. */
export function entryFacts(entry: LedgerEntry): SegmentFacts | undefined {
  const stats = entry.stats;
  if (!stats || stats.minTs === undefined || stats.hasSchema === undefined) return undefined;
  const empty = stats.rows === 0;
  const urls = [...stats.urls]
    .filter(([, c]) => c.count > 0)
    .map(([index, c]) => ({ index, count: c.count, size: c.size }))
    .sort((a, b) => a.index - b.index);
  return {
    file: entry.name,
    startTimestamp: entry.startTimestamp,
    count: stats.rows,
    begin: empty ? 0 : Math.max(0, stats.minTs),
    end: empty ? 0 : Math.max(0, stats.maxTs),
    hasSchema: stats.hasSchema,
    urls,
    ...(entry.counters ? { counters: entry.counters } : {}),
  };
}
