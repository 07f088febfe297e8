import type { Sample, UrlSeries } from './series.js';

/** What a url contributes to the row at base time `t`. */
export type Match =
  | { kind: 'sample'; sample: Sample }
  | { kind: 'linear'; before: Sample; after: Sample }
  | { kind: 'missing' };

/**
 * Whether the url's samples around `t` are final: no sample still to come can change the match. `horizon`: every
 * sample with a time below it has been released (log time base: the log time of the last frame read; publish time
 * base: the url's last released publish time; Infinity once the url's stream ended).
 */
export function isReady(series: UrlSeries, t: number, horizon: number, toleranceUs: number): boolean {
  if (series.ended) return true;
  if (horizon <= t) return false;
  if (series.policy === 'previous') return true;
  series.seek(t);
  // nearest and linear also need the first sample after t, unless none can come within the tolerance
  return series.next(t) !== undefined || horizon > t + toleranceUs;
}

/**
 * The match of one url at `t` (README "Matching"): `previous` the newest sample at or before `t`; `nearest` the
 * closer of that and the first sample after `t` (the earlier on a tie); `linear` the sample at exactly `t`, else the
 * two samples around `t`, both within the tolerance. A sample farther than `toleranceUs` from `t` is no match.
 */
export function matchAt(series: UrlSeries, t: number, toleranceUs: number): Match {
  series.seek(t);
  const before = series.previous(t);
  const dBefore = before === undefined ? Infinity : t - before.time;
  if (series.policy === 'previous') {
    return before !== undefined && dBefore <= toleranceUs ? { kind: 'sample', sample: before } : { kind: 'missing' };
  }
  const after = series.next(t);
  const dAfter = after === undefined ? Infinity : after.time - t;
  if (series.policy === 'nearest') {
    const pick = dBefore <= dAfter ? before : after;
    return pick !== undefined && Math.min(dBefore, dAfter) <= toleranceUs
      ? { kind: 'sample', sample: pick }
      : { kind: 'missing' };
  }
  if (before !== undefined && dBefore === 0) return { kind: 'sample', sample: before };
  if (before === undefined || after === undefined || dBefore > toleranceUs || dAfter > toleranceUs) {
    return { kind: 'missing' };
  }
  return { kind: 'linear', before, after };
}
