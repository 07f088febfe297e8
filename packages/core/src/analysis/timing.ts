import { BagError } from '../errors.js';
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

/** One url's timing: counts, rate, interval statistics (µs) and the gaps found. */
export interface UrlTiming {
  url: string;
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
 * Per-url timing of a bag: rate, interval percentiles and gaps (dropped messages, stalled sensors). Reads every
 * frame once through `frames()`, keeping only timestamps. The median period used for gaps ignores zero intervals
 * (frames stamped at the same instant are a burst, not a period); when a url has no positive interval it has no gaps.
 */
export async function analyzeTiming(source: TimingSource, options: TimingOptions = {}): Promise<UrlTiming[]> {
  const { factor = DEFAULT_GAP_FACTOR, filterUrls, signal } = options;
  if (!Number.isFinite(factor) || factor <= 0)
    throw new BagError('INVALID_ARGUMENT', `timing factor must be > 0, got ${factor}`);
  const byUrl = new Map<string, number[]>();
  for (const url of filterUrls ?? []) byUrl.set(url, []);
  const frameOptions: FramesOptions = {};
  if (filterUrls) frameOptions.filterUrls = filterUrls;
  if (signal) frameOptions.signal = signal;
  for await (const frame of source.frames(frameOptions)) {
    let list = byUrl.get(frame.url);
    if (!list) byUrl.set(frame.url, (list = []));
    list.push(frame.timestamp);
  }
  return [...byUrl.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([url, times]) => urlTiming(url, times, factor));
}

/** The timing of one url from its frame timestamps (µs, any order). */
export function urlTiming(url: string, timestamps: number[], factor = DEFAULT_GAP_FACTOR): UrlTiming {
  const times = Float64Array.from(timestamps).sort();
  const count = times.length;
  if (count < 2) return { url, count, rateHz: 0, intervalUs: null, gaps: [] };
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
