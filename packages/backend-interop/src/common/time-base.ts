const TWO_32 = 0x1_0000_0000;
/** |ns| below 2^49 (~6.5 days): a double holds it, and its thousandth closely enough to floor right. */
const FAST_NS = 2 ** 49;
/** The same bound on the high 32-bit half of a difference. */
const FAST_HI = 2 ** 17;

/**
 * The recording start of a foreign file and the ns → µs mapping of its times. The start is the earliest log time
 * floored to the millisecond (`Info.startTimestamp` is whole ms), so a frame's `timestamp` — µs since that start —
 * is `floor(logTime / 1000) − startMs · 1000`: the absolute time floored to the microsecond, exactly. Sub-µs parts are
 * dropped (documented per format). Times far from the start (a header stamp of 0 in a recording of today) are exact
 * too: they are taken apart or in bigint instead of as one double of ns.
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
    const dhi = hi - this.hi;
    // Near the start one double of ns is exact; farther (a publish time of 0 in a recording of today) bigint is.
    if (dhi < FAST_HI && dhi > -FAST_HI) return Math.floor((dhi * TWO_32 + (lo - this.lo)) / 1000);
    return this.usFromNs((BigInt(hi) << 32n) | BigInt(lo));
  }

  /** µs since the start for a ROS time (seconds and nanoseconds). */
  usFromSecNsec(sec: number, nsec: number): number {
    // Whole seconds become whole µs apart from the ns: exact for any 32-bit ROS time (a zero header stamp too).
    return (sec - this.sec) * 1_000_000 + Math.floor((nsec - this.nsec) / 1000);
  }

  /** µs since the start for ns since the epoch. */
  usFromNs(ns: bigint): number {
    const rel = ns - this.startNs;
    const near = Number(rel);
    if (near < FAST_NS && near > -FAST_NS) return Math.floor(near / 1000);
    const q = rel / 1000n; // truncates toward zero: floor for the negative ones below
    return Number(rel < 0n && q * 1000n !== rel ? q - 1n : q);
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
