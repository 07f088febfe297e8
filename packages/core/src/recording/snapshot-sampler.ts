import { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import { companionMetaFrame, type CompanionMeta } from '../model/companion-meta.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { readClock, type FrameSink, type RecordingClock } from './frame-sink.js';

/**
 * Why a tick recorded nothing, as the cause names stored in the file's counters by cause (format reference §2.13).
 * A tick is skipped for the first reason that applies, in this order.
 */
export const SNAPSHOT_SKIP = {
  /** A component has never been updated. */
  incomplete: 'incompleteSnapshot',
  /** A component's sample is older than `maxAgeUs` at the tick. */
  stale: 'staleSnapshot',
  /** The components' sample times lie further apart than `maxSpanUs`. */
  skewed: 'skewedSnapshot',
  /** No component (or, with `requireNew: 'all'`, not every one) has a new version since the last recorded snapshot. */
  duplicate: 'duplicateSample',
} as const;
/** Slots of the target rate that passed without a tick (the loop ran late), counted once the next tick comes. */
export const MISSED_SLOT = 'missedSlot';

export type SnapshotSkip = (typeof SNAPSHOT_SKIP)[keyof typeof SNAPSHOT_SKIP];

/** One component as the sampler holds it: the latest value, its times and its version. */
export interface SnapshotComponent<T> {
  value: T;
  /** When the component's value was sampled at its source (µs, recording time base); its receive time by default. */
  sampleUs: number;
  /** When `update` received it (the clock at the call). */
  receivedUs: number;
  /** The producer's version (sequence number, counter…); an update counter of the sampler's when not given. */
  version: number | string;
}

/** What `encode` turns into the recorded payload: every component, complete and fresh, taken at one tick. */
export interface Snapshot<T> {
  /** The tick's time: the sampling instant, recorded as the frame's publish time. */
  tickUs: number;
  /** The slot of the target rate the tick fell in (0 for the first tick). */
  slot: number;
  components: Record<string, SnapshotComponent<T>>;
}

export interface SnapshotSamplerOptions<T> {
  sink: FrameSink;
  /** The url the snapshots are recorded on (its companion metadata on `<url>/meta`). */
  url: string;
  /** The components a snapshot is made of; each must have been updated before a snapshot is complete. */
  components: readonly string[];
  /** The target rate: `tick()` is meant to be called once per `1 / rateHz`; late ticks count the slots they missed. */
  rateHz: number;
  /** The recording clock (µs since start): `() => writer.nowUs()` live, a fake one in tests. */
  clock: RecordingClock;
  /** The payload of a snapshot. */
  encode(snapshot: Snapshot<T>): Uint8Array;
  /** A component older than this (tick − its sample time, µs) makes the snapshot stale. Default: no limit. */
  maxAgeUs?: number;
  /** Components whose sample times lie further apart than this (µs) make the snapshot skewed. Default: no limit. */
  maxSpanUs?: number;
  /** `any` (default): a snapshot is new when at least one component has a new version; `all`: when every one has. */
  requireNew?: 'any' | 'all';
  serType?: string;
  schemaType?: SchemaType;
  /** Record each snapshot's component times and versions as companion metadata (`<url>/meta`). Default true. */
  meta?: boolean;
}

/** What a tick did. `refused`: the snapshot was complete, but the sink refused the frame (and counted why). */
export type TickOutcome =
  | { recorded: true; timestamp: number; publishTime: number; slot: number; missedSlots: number }
  | { recorded: false; skip: SnapshotSkip | 'refused' | 'sameSlot'; slot: number; missedSlots: number };

export interface SamplerStats {
  ticks: number;
  recorded: number;
  /** Skips and missed slots by cause, as counted into the sink. */
  skipped: Record<string, number>;
  /** Frames the sink refused (counted by the sink under its own cause). */
  refused: number;
}

/**
 * Records the latest complete, fresh snapshot of several components at a target rate. Producers call
 * `update(component, value)` whenever a component has a new value; the control loop calls `tick()` once per period.
 * A tick records one frame — publish time = the tick (the sampling instant), log time = the clock when the frame is
 * pushed, the components' own sample and receive times and versions in the companion metadata — or skips, counting
 * the reason in the recording's counters by cause on `url` (`SNAPSHOT_SKIP`, `missedSlot`). Nothing is timed here:
 * every time comes from the injected clock, so a test drives it exactly.
 */
export class SnapshotSampler<T = unknown> {
  private readonly options: SnapshotSamplerOptions<T>;
  private readonly periodUs: number;
  private readonly latest = new Map<string, SnapshotComponent<T>>();
  private readonly updates = new Map<string, number>();
  private recordedVersions: Map<string, number | string> | undefined;
  private originUs: number | undefined;
  private lastSlot = -1;
  private readonly counts: SamplerStats = { ticks: 0, recorded: 0, skipped: {}, refused: 0 };

  constructor(options: SnapshotSamplerOptions<T>) {
    const { url, components, rateHz, maxAgeUs, maxSpanUs } = options;
    if (typeof url !== 'string' || url.length === 0)
      throw new BagError('INVALID_ARGUMENT', 'SnapshotSampler: url must be a non-empty string');
    if (!Array.isArray(components) || components.length === 0 || new Set(components).size !== components.length)
      throw new BagError('INVALID_ARGUMENT', 'SnapshotSampler: components must be distinct names, at least one', {
        url,
      });
    if (!(rateHz > 0) || !Number.isFinite(rateHz))
      throw new BagError('INVALID_ARGUMENT', `SnapshotSampler: rateHz must be > 0, got ${rateHz}`, { url });
    for (const [name, value] of [
      ['maxAgeUs', maxAgeUs],
      ['maxSpanUs', maxSpanUs],
    ] as const)
      if (value !== undefined && !(value >= 0))
        throw new BagError('INVALID_ARGUMENT', `SnapshotSampler: ${name} must be ≥ 0, got ${value}`, { url });
    this.options = options;
    this.periodUs = 1e6 / rateHz;
  }

  /**
   * A new value of `component`. `version` identifies the sample (repeating a version means "no new sample"); without
   * it every update is new. `sampleUs` is when the value was sampled at its source; the receive time by default.
   */
  update(component: string, value: T, stamp: { version?: number | string; sampleUs?: number } = {}): void {
    if (!this.options.components.includes(component))
      throw new BagError('INVALID_ARGUMENT', `SnapshotSampler: unknown component '${component}'`, {
        url: this.options.url,
      });
    const receivedUs = readClock(this.options.clock, 'SnapshotSampler.update');
    const updates = (this.updates.get(component) ?? 0) + 1;
    this.updates.set(component, updates);
    const sampleUs = stamp.sampleUs === undefined ? receivedUs : Math.floor(stamp.sampleUs);
    if (!Number.isFinite(sampleUs))
      throw new BagError('INVALID_ARGUMENT', `SnapshotSampler: sampleUs must be finite, got ${stamp.sampleUs}`, {
        url: this.options.url,
      });
    this.latest.set(component, { value, sampleUs, receivedUs, version: stamp.version ?? updates });
  }

  /** Takes the snapshot of this slot: records it, or counts why not. */
  tick(): TickOutcome {
    const { url, sink } = this.options;
    const tickUs = readClock(this.options.clock, 'SnapshotSampler.tick');
    this.originUs ??= tickUs;
    // A tick belongs to the nearest slot, so ordinary loop jitter neither misses a slot nor repeats one.
    const slot = Math.floor((tickUs - this.originUs) / this.periodUs + 0.5);
    if (slot <= this.lastSlot) return { recorded: false, skip: 'sameSlot', slot, missedSlots: 0 };
    const missedSlots = slot - this.lastSlot - 1;
    this.lastSlot = slot;
    this.counts.ticks++;
    if (missedSlots > 0) this.countSkip(MISSED_SLOT, missedSlots);
    const skip = this.check(tickUs);
    if (skip) {
      this.countSkip(skip, 1);
      return { recorded: false, skip, slot, missedSlots };
    }
    const components: Record<string, SnapshotComponent<T>> = {};
    for (const name of this.options.components) components[name] = this.latest.get(name)!;
    const data = this.options.encode({ tickUs, slot, components });
    const frame: Frame = {
      timestamp: readClock(this.options.clock, 'SnapshotSampler.tick'),
      publishTime: tickUs,
      url,
      data,
      serType: this.options.serType ?? '',
      schemaType: this.options.schemaType ?? SchemaType.Unknown,
      actionType: ActionType.Publish,
    };
    const timestamp = sink.push(frame);
    if (timestamp < 0) {
      this.counts.refused++;
      return { recorded: false, skip: 'refused', slot, missedSlots };
    }
    this.recordedVersions = new Map(Object.entries(components).map(([name, c]) => [name, c.version]));
    this.counts.recorded++;
    if (this.options.meta !== false)
      sink.push(companionMetaFrame({ ...frame, timestamp }, this.meta(components, slot)));
    return { recorded: true, timestamp, publishTime: tickUs, slot, missedSlots };
  }

  /** What the sampler did so far. */
  stats(): SamplerStats {
    return { ...this.counts, skipped: { ...this.counts.skipped } };
  }

  private check(tickUs: number): SnapshotSkip | undefined {
    const { components, maxAgeUs, maxSpanUs, requireNew = 'any' } = this.options;
    if (components.some((name) => !this.latest.has(name))) return SNAPSHOT_SKIP.incomplete;
    const taken = components.map((name) => this.latest.get(name)!);
    if (maxAgeUs !== undefined && taken.some((c) => tickUs - c.sampleUs > maxAgeUs)) return SNAPSHOT_SKIP.stale;
    if (maxSpanUs !== undefined) {
      const times = taken.map((c) => c.sampleUs);
      if (Math.max(...times) - Math.min(...times) > maxSpanUs) return SNAPSHOT_SKIP.skewed;
    }
    const previous = this.recordedVersions;
    if (previous) {
      const fresh = components.map((name) => previous.get(name) !== this.latest.get(name)!.version);
      if (requireNew === 'all' ? !fresh.every(Boolean) : !fresh.some(Boolean)) return SNAPSHOT_SKIP.duplicate;
    }
    return undefined;
  }

  private countSkip(cause: string, n: number): void {
    this.counts.skipped[cause] = (this.counts.skipped[cause] ?? 0) + n;
    this.options.sink.count(this.options.url, cause, n);
  }

  private meta(components: Record<string, SnapshotComponent<T>>, slot: number): CompanionMeta {
    const out: NonNullable<CompanionMeta['components']> = {};
    for (const [name, c] of Object.entries(components))
      out[name] = { sampleUs: c.sampleUs, receivedUs: c.receivedUs, version: c.version };
    return { components: out, slot, rateHz: this.options.rateHz };
  }
}
