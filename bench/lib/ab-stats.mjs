// The statistics of bench/ab-builds.mjs: how much faster the head build is than the base, with a 95 % interval.
//
// Samples come as two arrays of ms per build, in repetition order; repetitions pair up (one with head first, one with
// base first), and a pair is the unit the bootstrap resamples.

import { median } from './format.mjs';

/**
 * 2,000 bootstrap estimates of `estimate(pairs)` over pairs drawn with replacement, from a fixed seed (the same data
 * gives the same interval). Returns the 2.5 and 97.5 percentiles.
 */
function bootstrap(pairCount, estimate) {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x80000000;
  };
  const boot = [];
  for (let b = 0; b < 2000; b++)
    boot.push(estimate(Array.from({ length: pairCount }, () => Math.floor(rand() * pairCount))));
  boot.sort((a, b) => a - b);
  return { low: boot[Math.floor(0.025 * boot.length)], high: boot[Math.floor(0.975 * boot.length)] };
}

/**
 * Speed (base ms / head ms) per pair of repetitions, one with head first and one with base first, as the geometric
 * mean of the two ratios: whatever running first or second costs cancels out within the pair. Returns the median of
 * those and its bootstrap 95 % interval.
 */
export function pairedSpeed(head, base) {
  const ratios = [];
  for (let i = 0; i + 1 < head.length; i += 2)
    ratios.push(Math.sqrt((base[i] / head[i]) * (base[i + 1] / head[i + 1])));
  return { median: median(ratios), ...bootstrap(ratios.length, (pick) => median(pick.map((p) => ratios[p]))) };
}

/**
 * Speed at the same process state, for runs with a child process per build and repetition: `copy` holds each child's
 * memory-copy time (lib/process-speed.mjs), `copy.head[i]` the one of the child that timed `head[i]`. A least-squares
 * fit of log ms = a + d·[head] + b·log copy ms over every child gives speed = e^−d: the builds compared at the same
 * copy speed, which removes most of the spread between processes when the case's time follows it (b near 1) and costs
 * little when it does not (b near 0). The interval resamples pairs of repetitions, as `pairedSpeed` does. Also
 * returns b, so a reader sees how much the case followed the process's state.
 */
export function adjustedSpeed(head, base, copy) {
  const fit = (pairs) => {
    const points = [];
    for (const p of pairs)
      for (const i of [2 * p, 2 * p + 1]) {
        points.push([1, Math.log(head[i]), Math.log(copy.head[i])]);
        points.push([0, Math.log(base[i]), Math.log(copy.base[i])]);
      }
    const mean = (k) => points.reduce((sum, point) => sum + point[k], 0) / points.length;
    const [mh, my, mx] = [mean(0), mean(1), mean(2)];
    let shh = 0;
    let sxx = 0;
    let shx = 0;
    let shy = 0;
    let sxy = 0;
    for (const [h, y, x] of points) {
      shh += (h - mh) ** 2;
      sxx += (x - mx) ** 2;
      shx += (h - mh) * (x - mx);
      shy += (h - mh) * (y - my);
      sxy += (x - mx) * (y - my);
    }
    const det = shh * sxx - shx * shx;
    // A resample with one build only, or copy times all alike, leaves nothing to adjust by: the plain difference.
    if (shh === 0) return { d: 0, b: 0 };
    if (!(Math.abs(det) > 1e-12 * shh * sxx)) return { d: shy / shh, b: 0 };
    return { d: (shy * sxx - sxy * shx) / det, b: (sxy * shh - shy * shx) / det };
  };
  const pairCount = Math.floor(head.length / 2);
  const all = fit(Array.from({ length: pairCount }, (_, p) => p));
  const interval = bootstrap(pairCount, (pick) => Math.exp(-fit(pick).d));
  return { median: Math.exp(-all.d), ...interval, slope: all.b };
}

/** The verdict on an interval: within 5 % or better when its low end is at least 0.95, slower when all is below. */
export function verdictOf(interval, enough) {
  if (!enough) return 'too few repetitions';
  if (interval.low >= 0.95) return 'within 5 % or better';
  if (interval.high < 0.95) return 'slower by more than 5 %';
  return 'not resolved';
}
