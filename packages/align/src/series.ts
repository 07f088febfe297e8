import type { Frame } from '@vlink/bag-core';
import type { MatchPolicy } from './options.js';

/** One message of a url on the time base; its payload is decoded on first use (most are never picked). */
export interface Sample {
  time: number;
  frame: Frame;
  /** The decoded values in the url's column order; null when the payload did not decode; undefined until used. */
  values?: unknown[] | null;
}

/** What happened to one url, as the JSON description reports it. */
export interface UrlCounts {
  /** Data messages (Pub/Sub/Set/Get) read. */
  samples: number;
  /** RPC requests and responses of the url, not aligned (they are two streams, not one). */
  skippedActions: number;
  /** Publish time base: samples that arrived more than `reorderWindowUs` behind the url's newest, left out. */
  late: number;
  /** Picked messages whose payload did not decode (the row treats the url as missing). */
  decodeErrors: number;
  /** Rows that used a sample of the url (for `linear`, including the exact and the interpolated ones). */
  matched: number;
  /** Rows whose values were interpolated between two samples (`linear`). */
  interpolated: number;
  /** Rows with no sample within the tolerance. */
  missing: number;
  /** Of those, rows given the url's last written values (`ffill`). */
  filled: number;
  /** Decoded fields that the url's first message did not have, by field path: no column holds them. */
  unknownFields: Record<string, number>;
  /** Values whose type differed from their column's (written as null). */
  typeMismatches: number;
}

export const newCounts = (): UrlCounts => ({
  samples: 0,
  skippedActions: 0,
  late: 0,
  decodeErrors: 0,
  matched: 0,
  interpolated: 0,
  missing: 0,
  filled: 0,
  unknownFields: {},
  typeMismatches: 0,
});

/**
 * A url's samples in time-base order. Log times arrive in order; publish times can arrive out of order, so samples
 * wait in a buffer until they are `window` µs behind the url's newest sample, and are then released to matching in
 * order. A sample arriving more than `window` behind the newest is late: counted and left out. So every sample with
 * a time below `cutoff` has been released or counted, whatever comes later. `queue[head]` is the newest released
 * sample at or before the last base time matched; older ones are dropped as the base time moves on.
 */
export class UrlSeries {
  readonly url: string;
  readonly policy: MatchPolicy;
  readonly counts = newCounts();
  private readonly window: number;
  private readonly pending: Sample[] = [];
  readonly queue: Sample[] = [];
  head = 0;
  /** The newest sample time seen. */
  private newest = -Infinity;
  firstTime: number | undefined;
  lastTime: number | undefined;
  ended = false;
  /** `ffill`: the values and time this url last had in a written row. */
  lastWritten: { time: number; values: unknown[] } | undefined;

  constructor(url: string, policy: MatchPolicy, window: number) {
    this.url = url;
    this.policy = policy;
    this.window = window;
  }

  /** Every sample with a time below this has been released or counted late. */
  get cutoff(): number {
    return this.newest - this.window;
  }

  push(sample: Sample): void {
    this.counts.samples++;
    if (sample.time < this.cutoff) {
      this.counts.late++;
      return;
    }
    if (sample.time > this.newest) this.newest = sample.time;
    if (this.window === 0) {
      this.release(sample);
      return;
    }
    let at = this.pending.length;
    while (at > 0 && this.pending[at - 1]!.time > sample.time) at--;
    this.pending.splice(at, 0, sample);
    const cutoff = this.cutoff;
    let n = 0;
    while (n < this.pending.length && this.pending[n]!.time <= cutoff) this.release(this.pending[n++]!);
    if (n > 0) this.pending.splice(0, n);
  }

  end(): void {
    for (const sample of this.pending) this.release(sample);
    this.pending.length = 0;
    this.ended = true;
  }

  private release(sample: Sample): void {
    this.firstTime ??= sample.time;
    this.lastTime = sample.time;
    this.queue.push(sample);
  }

  /** Moves `head` to the newest sample at or before `t` (base times only grow) and drops what is behind it. */
  seek(t: number): void {
    while (this.head + 1 < this.queue.length && this.queue[this.head + 1]!.time <= t) this.head++;
    if (this.head >= 64) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The newest sample at or before `t` (after `seek(t)`). */
  previous(t: number): Sample | undefined {
    const s = this.queue[this.head];
    return s !== undefined && s.time <= t ? s : undefined;
  }

  /** The first released sample after `t` (after `seek(t)`). */
  next(t: number): Sample | undefined {
    const s = this.queue[this.head];
    if (s === undefined) return undefined;
    return s.time > t ? s : this.queue[this.head + 1];
  }
}
