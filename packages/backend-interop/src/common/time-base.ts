const TWO_32 = 0x1_0000_0000;

/**
 * The recording start of a foreign file and the ns → µs mapping of its times. The start is the earliest log time
 * floored to the millisecond (`Info.startTimestamp` is whole ms), so a frame's `timestamp` — µs since that start —
 * is `floor(logTime / 1000) − startMs · 1000`: the absolute time floored to the microsecond, exactly. Sub-µs parts are
 * dropped (documented per format); times up to ~104 days after the start are exact (they fit a double in ns).
 */
export class TimeBase {
  /** ms since the Unix epoch (or since boot for ULog). */
  readonly startMs: number;
  /** `startMs` in ns. */
  readonly startNs: bigint;
  private readonly hi: number;
  private readonly lo: number;
  private readonly sec: number;
  private readonly nsec: number;

  constructor(startMs: number) {
    this.startMs = startMs;
    this.startNs = BigInt(startMs) * 1_000_000n;
    this.hi = Number(this.startNs >> 32n);
    this.lo = Number(this.startNs & 0xffff_ffffn);
    this.sec = Math.floor(startMs / 1000);
    this.nsec = (startMs - this.sec * 1000) * 1_000_000;
  }

  /** The base for a file whose earliest time is `firstNs` (none: the epoch). */
  static fromFirstNs(firstNs: bigint | undefined): TimeBase {
    return new TimeBase(firstNs === undefined || firstNs < 0n ? 0 : Number(firstNs / 1_000_000n));
  }

  /** µs since the start for a time given as its two 32-bit halves (MCAP cursors). */
  usFromHalves(hi: number, lo: number): number {
    return Math.floor(((hi - this.hi) * TWO_32 + (lo - this.lo)) / 1000);
  }

  /** µs since the start for a ROS time (seconds and nanoseconds). */
  usFromSecNsec(sec: number, nsec: number): number {
    return Math.floor(((sec - this.sec) * 1_000_000_000 + (nsec - this.nsec)) / 1000);
  }

  /** µs since the start for ns since the epoch. */
  usFromNs(ns: bigint): number {
    return Math.floor(Number(ns - this.startNs) / 1000);
  }

  /** µs since the start for ns relative to the start (already subtracted, e.g. by SQL). */
  usFromRelativeNs(relativeNs: number): number {
    return Math.floor(relativeNs / 1000);
  }

  /** µs since the start for µs since the epoch (ULog). */
  usFromUs(us: number): number {
    return us - this.startMs * 1000;
  }

  /** ns since the epoch of the first ns of µs `us` since the start (inclusive lower bounds). */
  nsAtUs(us: number): bigint {
    return this.startNs + BigInt(Math.ceil(us)) * 1000n;
  }

  /** ns since the epoch of the last ns of µs `us` since the start (inclusive upper bounds). */
  nsAtEndOfUs(us: number): bigint {
    return this.startNs + BigInt(Math.floor(us)) * 1000n + 999n;
  }
}

/** Inclusive µs window test for a query's optional bounds. */
export function inWindow(us: number, beginUs: number | undefined, endUs: number | undefined): boolean {
  return (beginUs === undefined || us >= beginUs) && (endUs === undefined || us <= endUs);
}
