import { dumpJson, type JsonValue } from './json-dump.js';
import { segmentFactsJson, type SegmentFacts } from './segment-facts.js';

/**
 * The manifest of a split recording (`.vdbx` format reference §4.1, `.vcapx` §6): what VLink's `ordered_json` holds, in its key
 * order. Sizes are bytes, `duration` µs, `splitByTime` and `startTimestamp` ms.
 */
export interface SplitManifest {
  header: ManifestHeader;
  urls: ManifestUrl[];
  /** Segment file names only, oldest first; the segment being written is left out until close. */
  files: string[];
  /**
   * vlink-bag: what each listed segment holds (`VLinkBagSegments`, one entry per `files` entry, same order), so readers
   * need not open a segment for `info` or to find where a time lies. Absent: the key is not written.
   */
  segments?: SegmentFacts[];
}

export interface ManifestHeader {
  major: number;
  minor: number;
  patch: number;
  count: number;
  duration: number;
  accuracy: string;
  compress: string;
  process: string;
  date: string;
  tag: string;
  splitBySize: number;
  splitByTime: number;
  complete: boolean;
  timezone: number;
  startTimestamp: number;
}

export interface ManifestUrl {
  index: number;
  url: string;
  type: string;
  /** `.vcapx` only: one entry per (url, action). */
  action?: string;
  ser: string;
  encoding: string;
  count: number;
  size: number;
  loss: number;
  freq: number;
}

/** `.vdbx` keys urls by url; `.vcapx` by (url, action) and writes `action` after `type`. */
export type ManifestFlavor = 'vdbx' | 'vcapx';

/** The C++ doubles of the manifest; everything else numeric is an integer. */
export const MANIFEST_FLOAT_KEYS: ReadonlySet<string> = new Set(['loss', 'freq']);

/**
 * The manifest as ordered JSON: `VLinkHeader`, `VLinkUrls`, `VLinkFiles`, keys as VLink orders them, then vlink-bag's
 * `VLinkBagSegments` when the manifest has segment facts (VLink's reader looks its three keys up by name).
 */
export function manifestJson(manifest: SplitManifest, flavor: ManifestFlavor): { [key: string]: JsonValue } {
  const h = manifest.header;
  return {
    VLinkHeader: {
      major: h.major,
      minor: h.minor,
      patch: h.patch,
      count: h.count,
      duration: h.duration,
      accuracy: h.accuracy,
      compress: h.compress,
      process: h.process,
      date: h.date,
      tag: h.tag,
      split_by_size: h.splitBySize,
      split_by_time: h.splitByTime,
      complete: h.complete,
      timezone: h.timezone,
      start_timestamp: h.startTimestamp,
    },
    VLinkUrls: manifest.urls.map((u) => manifestUrlJson(u, flavor)),
    VLinkFiles: [...manifest.files],
    ...(manifest.segments ? { VLinkBagSegments: manifest.segments.map(segmentFactsJson) } : {}),
  };
}

/**
 * One `VLinkUrls` entry, keys as VLink orders them; the one place that order lives (written by the split writer,
 * rewritten by `repair` and by the recovery of unlisted segments).
 */
export function manifestUrlJson(u: ManifestUrl, flavor: ManifestFlavor): { [key: string]: JsonValue } {
  return {
    index: u.index,
    url: u.url,
    type: u.type,
    ...(flavor === 'vcapx' ? { action: u.action ?? 'Unknown' } : {}),
    ser: u.ser,
    encoding: u.encoding,
    count: u.count,
    size: u.size,
    loss: u.loss,
    freq: u.freq,
  };
}

/** The manifest text VLink writes (`dump(4)`, no trailing newline). */
export function serializeManifest(manifest: SplitManifest, flavor: ManifestFlavor): string {
  return dumpJson(manifestJson(manifest, flavor), { floatKeys: MANIFEST_FLOAT_KEYS });
}
