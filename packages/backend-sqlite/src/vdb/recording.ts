import type { ResolvedWriterConfig, SchemaType, UrlKind } from '@vlink/bag-core';
import type { CompressionDecider, CompressionDeciderSnapshot } from '@vlink/bag-core/internal';
import { createDecider } from './compression.js';

/** A url as the whole recording knows it; `index` is the global id stored in `VLinkDatas.url` (format reference §2.4). */
export interface RecordingUrl {
  readonly index: number;
  readonly url: string;
  /** From the first message of the url anywhere in the recording. */
  readonly type: UrlKind;
  ser: string;
  schemaType: SchemaType;
  count: number;
  /** Accounted (uncompressed) bytes. */
  size: number;
  /** First and last timestamps of Pub/Sub/Set/Get messages (insertion order), −1 when none. */
  firstTs: number;
  lastTs: number;
}

/** What a snapshot keeps of a url: the fields that change after the url is registered. */
type UrlSnapshot = Pick<RecordingUrl, 'ser' | 'schemaType' | 'count' | 'size' | 'firstTs' | 'lastTs'>;

export interface RecordingSnapshot {
  count: number;
  size: number;
  maxTimestamp: number;
  urls: Map<RecordingUrl, UrlSnapshot>;
  decider: CompressionDeciderSnapshot | undefined;
}

/**
 * Bookkeeping that outlives one file: global url ids, recording totals, per-url losses and the compression failure
 * counters (which survive splits, format reference §3.3). A single `.vdb` owns one; a split layer shares one across segments.
 */
export class VdbRecording {
  /** In order of first appearance, so iteration order = global index order. */
  readonly urls = new Map<string, RecordingUrl>();
  readonly losses = new Map<string, number>();
  readonly decider: CompressionDecider | undefined;
  /** Messages in the recording, net of evictions. */
  count = 0;
  /** Accounted (uncompressed) bytes, net of evictions. */
  size = 0;
  /** Largest timestamp written anywhere (µs since recording start). */
  maxTimestamp = 0;

  constructor(config: ResolvedWriterConfig) {
    this.decider = createDecider(config);
  }

  /** Registers a url seen for the first time and gives it the next global id. */
  addUrl(url: string, type: UrlKind, ser: string, schemaType: SchemaType): RecordingUrl {
    const entry: RecordingUrl = {
      index: this.urls.size,
      url,
      type,
      ser,
      schemaType,
      count: 0,
      size: 0,
      firstTs: -1,
      lastTs: -1,
    };
    this.urls.set(url, entry);
    return entry;
  }

  /** Loss ratio of a url; values > 1 mean unknown and are kept as −1 (format reference §2.4). */
  setLoss(url: string, loss: number): void {
    this.losses.set(url, loss > 1 || !Number.isFinite(loss) ? -1 : loss);
  }

  snapshot(): RecordingSnapshot {
    const urls = new Map<RecordingUrl, UrlSnapshot>();
    for (const u of this.urls.values()) {
      urls.set(u, {
        ser: u.ser,
        schemaType: u.schemaType,
        count: u.count,
        size: u.size,
        firstTs: u.firstTs,
        lastTs: u.lastTs,
      });
    }
    return {
      count: this.count,
      size: this.size,
      maxTimestamp: this.maxTimestamp,
      urls,
      decider: this.decider?.snapshot(),
    };
  }

  /** Undoes everything since `snapshot()`, including urls registered since (their ids are handed out again). */
  restore(s: RecordingSnapshot): void {
    this.count = s.count;
    this.size = s.size;
    this.maxTimestamp = s.maxTimestamp;
    for (const [url, entry] of this.urls) {
      const saved = s.urls.get(entry);
      if (saved === undefined) this.urls.delete(url);
      else Object.assign(entry, saved);
    }
    if (this.decider && s.decider) this.decider.restore(s.decider);
  }
}

/** VLink's average rate: count over the first-to-last span in seconds; 0 when the span is not positive. */
export function frequency(count: number, firstTs: number, lastTs: number): number {
  return firstTs >= 0 && lastTs > firstTs ? count / ((lastTs - firstTs) / 1e6) : 0;
}
