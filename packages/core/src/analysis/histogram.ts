/**
 * A histogram ready to plot: `counts[i]` values fell in `[edges[i], edges[i + 1])`, the last bin also holds its upper
 * edge; values above the last edge are in `over`, below the first in `under`. Edges are explicit so a plot (the web
 * player, a notebook) needs no binning rule of its own.
 */
export interface Histogram {
  edges: number[];
  counts: number[];
  under: number;
  over: number;
}

/** Nearest-rank percentiles of values (any order); null when there are none. */
export function percentiles(values: ArrayLike<number>): { min: number; p50: number; p99: number; max: number } | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return { min: sorted[0]!, p50: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1]! };
}

/** `bins` equal bins from `low` to `high` (a single bin when they are equal); values outside are `under`/`over`. */
export function histogram(values: ArrayLike<number>, low: number, high: number, bins: number): Histogram {
  const width = high > low ? (high - low) / bins : 0;
  const n = width > 0 ? bins : 1;
  const edges = Array.from({ length: n + 1 }, (_, i) => (width > 0 ? low + i * width : low + i));
  if (width === 0) edges[1] = low;
  const counts = new Array<number>(n).fill(0);
  let under = 0;
  let over = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v < low) under++;
    else if (v > high) over++;
    else counts[width > 0 ? Math.min(n - 1, Math.floor((v - low) / width)) : 0]!++;
  }
  return { edges, counts, under, over };
}
