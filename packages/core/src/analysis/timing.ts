import { BagError } from '../errors.js';
import { actionText, type ActionText } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import type { FramesOptions } from '../reader/bag-reader.js';

/** See {@link TimingOptions.factor}. */
export const DEFAULT_GAP_FACTOR = 1.5;

export interface TimingOptions {
  /**
   * An interval longer than `factor` × the url's median period is a gap. Default 1.5: one missing message doubles an
   * interval, so a 0.1 s hole in a 10 Hz stream (a 200 ms interval) is a gap, while ordinary jitter is not.
   */
  factor?: number;
  /** Urls to analyse (playback urls when a plugin is bound); listed urls without frames are reported with count 0. */
  filterUrls?: readonly string[];
  signal?: AbortSignal;
}

/**
 * One stream's timing: counts, rate, interval statistics (µs) and the gaps found. A stream is a url AND an action: an
 * RPC url's requests and responses (or a url both published and subscribed) are separate streams, since their
 * interleaving would otherwise halve every interval and make each regular period look like a gap.
 */
export interface UrlTiming {
  url: string;
  /** The stream's action (`Pub`, `C/Req`, …); null for a url asked for in `filterUrls` that has no frames. */
  action: ActionText | null;
  count: number;
  /** `(count − 1) / span`; 0 with fewer than two frames or a zero span. */
  rateHz: number;
  /** Nearest-rank percentiles of the intervals between consecutive frames; null with fewer than two frames. */
  intervalUs: { min: number; p50: number; p99: number; max: number } | null;
  /** Intervals longer than `factor` × the median period: where the silence starts and how long it lasts. */
  gaps: Array<{ startUs: number; lengthUs: number }>;
}

/** What `analyzeTiming` reads from; a `BagReader` fits. */
export interface TimingSource {
  frames(options?: FramesOptions): AsyncIterable<Frame>;
}

/**
 * Per-url-and-action timing of a bag: rate, interval percentiles and gaps (dropped messages, stalled sensors). Reads every
 * frame once through `frames()`, keeping only timestamps. The median period used for gaps ignores zero intervals
 * (frames stamped at the same instant are a burst, not a period); when a url has no positive interval it has no gaps.
 */
export async function analyzeTiming(source: TimingSource, options: TimingOptions = {}): Promise<UrlTiming[]> {
  const { factor = DEFAULT_GAP_FACTOR, filterUrls, signal } = options;
  if (!Number.isFinite(factor) || factor <= 0)
    throw new BagError('INVALID_ARGUMENT', `timing factor must be > 0, got ${factor}`);
  // url → action → timestamps
  const byUrl = new Map<string, Map<number, number[]>>();
  const frameOptions: FramesOptions = {};
  if (filterUrls) frameOptions.filterUrls = filterUrls;
  if (signal) frameOptions.signal = signal;
  for await (const frame of source.frames(frameOptions)) {
    let actions = byUrl.get(frame.url);
    if (!actions) byUrl.set(frame.url, (actions = new Map()));
    let list = actions.get(frame.actionType);
    if (!list) actions.set(frame.actionType, (list = []));
    list.push(frame.timestamp);
  }
  const out: UrlTiming[] = [];
  for (const url of filterUrls ?? []) if (!byUrl.has(url)) out.push(urlTiming(url, [], factor, null));
  for (const [url, actions] of byUrl)
    for (const [action, times] of actions) out.push(urlTiming(url, times, factor, actionText(action)));
  const key = (t: UrlTiming) => [t.url, t.action ?? ''] as const;
  return out.sort((a, b) => {
    const [ua, aa] = key(a);
    const [ub, ab] = key(b);
    return ua < ub ? -1 : ua > ub ? 1 : aa < ab ? -1 : aa > ab ? 1 : 0;
  });
}

/** The timing of one stream (a url and an action) from its frame timestamps (µs, any order). */
export function urlTiming(
  url: string,
  timestamps: number[],
  factor = DEFAULT_GAP_FACTOR,
  action: ActionText | null = null,
): UrlTiming {
  const times = Float64Array.from(timestamps).sort();
  const count = times.length;
  if (count < 2) return { url, action, count, rateHz: 0, intervalUs: null, gaps: [] };
  const intervals = new Float64Array(count - 1);
  for (let i = 1; i < count; i++) intervals[i - 1] = times[i]! - times[i - 1]!;
  const sorted = intervals.slice().sort();
  const span = times[count - 1]! - times[0]!;
  const firstPositive = sorted.findIndex((v) => v > 0);
  const period = firstPositive < 0 ? 0 : rank(sorted.subarray(firstPositive), 0.5);
  const gaps: UrlTiming['gaps'] = [];
  if (period > 0) {
    for (let i = 0; i < intervals.length; i++) {
      if (intervals[i]! > factor * period) gaps.push({ startUs: times[i]!, lengthUs: intervals[i]! });
    }
  }
  return {
    url,
    action,
    count,
    rateHz: span > 0 ? (count - 1) / (span / 1e6) : 0,
    intervalUs: { min: sorted[0]!, p50: rank(sorted, 0.5), p99: rank(sorted, 0.99), max: sorted[sorted.length - 1]! },
    gaps,
  };
}

/** Nearest-rank percentile of sorted values: the smallest value with at least `p` of the values at or below it. */
function rank(sorted: Float64Array, p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}
