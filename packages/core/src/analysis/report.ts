import { BagError } from '../errors.js';
import { actionText, type ActionText } from '../model/action-type.js';
import { companionMetaOf } from '../model/companion-meta.js';
import type { Info } from '../model/info.js';
import type { SummarySource } from './summary.js';
import { histogram, percentiles, type Histogram } from './histogram.js';

/** The version of the report's semantics (format reference §14); bumped whenever a field changes meaning. */
export const REPORT_SEMANTICS = 1;

type Spread = { min: number; p50: number; p99: number; max: number } | null;

/** One stream (a url AND an action: requests and responses, publishes and subscriptions are separate streams). */
export interface StreamReport {
  url: string;
  action: ActionText;
  count: number;
  /** `(count − 1) / span` of the log times; 0 with fewer than two messages. */
  rateHz: number;
  /** Intervals between consecutive log times (µs) and their histogram (see `ReportOptions.bins`). */
  intervalUs: Spread;
  intervalHistogram: Histogram | null;
  /**
   * Time semantics: `log` when every message's publish time equals its log time (the producer gave none), `publish`
   * when none does, `mixed` otherwise; `latencyUs` is log − publish (how late the recorder got the sample).
   */
  time: 'log' | 'publish' | 'mixed';
  latencyUs: Spread;
}

/** Publish-time offsets of one url against its group's reference url. */
export interface OffsetReport {
  url: string;
  /** Messages whose nearest reference publish time is within the tolerance, and those that have none. */
  matched: number;
  unmatched: number;
  /** Messages with exactly the reference's publish time. */
  exact: number;
  /** This url's publish time − the nearest reference publish time (µs), over the matched messages. */
  offsetUs: Spread;
  offsetHistogram: Histogram | null;
}

/** Urls meant to be simultaneous (a stereo pair, a snapshot's parts) and how far apart their publish times are. */
export interface OffsetGroup {
  /** `given`: from `ReportOptions.groups`; `shared`: found because their publish times coincide (see `analyzeReport`). */
  source: 'given' | 'shared';
  reference: string;
  toleranceUs: number;
  members: OffsetReport[];
}

/** The validation report (`vlink-bag report`, `GET /api/v1/bags/{id}/report`): JSON Schema `REPORT_JSON_SCHEMA`. */
export interface BagReport {
  semantics: typeof REPORT_SEMANTICS;
  path: string;
  format: string;
  messageCount: number;
  streams: StreamReport[];
  groups: OffsetGroup[];
  /** Counters by cause, url → cause → count (`Info.counters`). */
  counters: Record<string, Record<string, number>>;
  /** Read errors met (the report covers what was read before). */
  errors: string[];
}

export interface ReportOptions {
  /** Urls meant to be simultaneous, each group's first url the reference. Default: groups of shared publish times. */
  groups?: ReadonlyArray<readonly string[]>;
  /** Histogram bins over 0 … 3 × the median (default 30); longer values count as `over`. */
  bins?: number;
  /** A member's message matches when the nearest reference publish time is within this (µs). Default: half the
   * reference's median publish interval. */
  toleranceUs?: number;
  signal?: AbortSignal;
}

/** A url is grouped with another automatically when at least this share of its publish times occur in both. */
const SHARED_SHARE = 0.5;
/** Automatic grouping compares every pair of urls: above this many urls it is skipped (give the groups). */
const MAX_AUTO_URLS = 200;

/**
 * Reads every message once (keeping two numbers per message) and reports per stream frequency, interval histogram,
 * time semantics and latency, and for groups of urls meant to be simultaneous the offsets of their publish times.
 * Without `groups`, urls whose publish times coincide for at least half of the messages of one of them are grouped
 * (frames that share a publish time: one trigger, one snapshot); companion metadata urls (`…/meta`) are left out,
 * since they copy their url's times by definition.
 */
export async function analyzeReport(source: SummarySource, options: ReportOptions = {}): Promise<BagReport> {
  const bins = options.bins ?? 30;
  if (!Number.isInteger(bins) || bins < 1 || bins > 1000)
    throw new BagError('INVALID_ARGUMENT', `report bins must be an integer 1…1000, got ${bins}`);
  if (options.toleranceUs !== undefined && !(options.toleranceUs >= 0))
    throw new BagError('INVALID_ARGUMENT', `report tolerance must be ≥ 0 µs, got ${options.toleranceUs}`);
  const info: Info = source.getInfo();
  const errors: string[] = [];
  const streams = new Map<string, { url: string; action: number; log: number[]; publish: number[] }>();
  const publishByUrl = new Map<string, number[]>();
  try {
    for await (const frame of source.frames(options.signal ? { signal: options.signal } : {})) {
      const key = `${frame.actionType}\x1f${frame.url}`;
      let s = streams.get(key);
      if (!s) streams.set(key, (s = { url: frame.url, action: frame.actionType, log: [], publish: [] }));
      const publish = frame.publishTime ?? frame.timestamp;
      s.log.push(frame.timestamp);
      s.publish.push(publish);
      let list = publishByUrl.get(frame.url);
      if (!list) publishByUrl.set(frame.url, (list = []));
      list.push(publish);
    }
  } catch (error) {
    const e = BagError.wrap(error, 'IO_ERROR', 'reading failed');
    if (e.code === 'ABORTED') throw e;
    errors.push(`${e.code}: ${e.message}`);
  }
  const out = [...streams.values()].map((s) => streamReport(s.url, s.action, s.log, s.publish, bins));
  out.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.action < b.action ? -1 : a.action > b.action ? 1 : 0));
  for (const list of publishByUrl.values()) list.sort((a, b) => a - b);
  const given = options.groups;
  if (given)
    for (const group of given)
      for (const url of group)
        if (!publishByUrl.has(url))
          throw new BagError('INVALID_ARGUMENT', `report group names a url without messages: ${url}`, { url });
  const groups = (given ? given.map((g) => [...g]) : sharedGroups(publishByUrl)).filter((g) => g.length >= 2);
  return {
    semantics: REPORT_SEMANTICS,
    path: info.path,
    format: info.format,
    messageCount: info.messageCount,
    streams: out,
    groups: groups.map((g) => offsetGroup(g, publishByUrl, given ? 'given' : 'shared', bins, options.toleranceUs)),
    counters: info.counters ?? {},
    errors,
  };
}

function streamReport(url: string, action: number, log: number[], publish: number[], bins: number): StreamReport {
  const times = Float64Array.from(log).sort();
  const intervals = new Float64Array(Math.max(0, times.length - 1));
  for (let i = 1; i < times.length; i++) intervals[i - 1] = times[i]! - times[i - 1]!;
  const intervalUs = percentiles(intervals);
  const latency = log.map((t, i) => t - publish[i]!);
  const own = latency.filter((d) => d !== 0).length;
  const span = times.length > 1 ? times[times.length - 1]! - times[0]! : 0;
  return {
    url,
    action: actionText(action),
    count: log.length,
    rateHz: span > 0 ? (log.length - 1) / (span / 1e6) : 0,
    intervalUs,
    intervalHistogram: intervalUs ? histogram(intervals, 0, 3 * intervalUs.p50, bins) : null,
    time: own === 0 ? 'log' : own === log.length ? 'publish' : 'mixed',
    latencyUs: percentiles(latency),
  };
}

/** Groups of urls sharing publish times (connected through pairs where ≥ half of one url's times occur in both). */
function sharedGroups(publishByUrl: Map<string, number[]>): string[][] {
  const urls = [...publishByUrl.keys()].filter((url) => companionMetaOf(url) === undefined).sort();
  if (urls.length > MAX_AUTO_URLS) return [];
  const sets = new Map(urls.map((url) => [url, new Set(publishByUrl.get(url))]));
  const parent = new Map(urls.map((url) => [url, url]));
  const root = (url: string): string => {
    let r = url;
    while (parent.get(r) !== r) r = parent.get(r)!;
    return r;
  };
  for (let i = 0; i < urls.length; i++)
    for (let j = i + 1; j < urls.length; j++) {
      const [a, b] = [sets.get(urls[i]!)!, sets.get(urls[j]!)!];
      const [small, large] = a.size <= b.size ? [a, b] : [b, a];
      let shared = 0;
      for (const t of small) if (large.has(t)) shared++;
      if (small.size > 0 && shared >= SHARED_SHARE * small.size) parent.set(root(urls[j]!), root(urls[i]!));
    }
  const byRoot = new Map<string, string[]>();
  for (const url of urls) byRoot.set(root(url), [...(byRoot.get(root(url)) ?? []), url]);
  // The reference of a found group is its url with the most messages (ties: the first by name).
  return [...byRoot.values()].map((g) =>
    g.sort((a, b) => publishByUrl.get(b)!.length - publishByUrl.get(a)!.length || (a < b ? -1 : 1)),
  );
}

function offsetGroup(
  group: string[],
  publishByUrl: Map<string, number[]>,
  source: OffsetGroup['source'],
  bins: number,
  tolerance: number | undefined,
): OffsetGroup {
  const reference = group[0]!;
  const ref = publishByUrl.get(reference)!;
  const steps: number[] = [];
  for (let i = 1; i < ref.length; i++) if (ref[i]! > ref[i - 1]!) steps.push(ref[i]! - ref[i - 1]!);
  const toleranceUs = tolerance ?? Math.floor((percentiles(steps)?.p50 ?? 0) / 2);
  const members = group.slice(1).map((url): OffsetReport => {
    const offsets: number[] = [];
    let unmatched = 0;
    let exact = 0;
    let j = 0;
    for (const t of publishByUrl.get(url)!) {
      while (j + 1 < ref.length && Math.abs(ref[j + 1]! - t) <= Math.abs(ref[j]! - t)) j++;
      const offset = t - ref[j]!;
      if (Math.abs(offset) > toleranceUs) unmatched++;
      else {
        offsets.push(offset);
        if (offset === 0) exact++;
      }
    }
    const spread = percentiles(offsets);
    return {
      url,
      matched: offsets.length,
      unmatched,
      exact,
      offsetUs: spread,
      offsetHistogram: spread ? histogram(offsets, -toleranceUs, toleranceUs, bins) : null,
    };
  });
  return { source, reference, toleranceUs, members };
}
