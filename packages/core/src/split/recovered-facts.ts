import type { BackendReader } from '../backend/backend.js';
import type { UrlMeta } from '../model/info.js';
import type { ManifestFlavor } from './manifest.js';
import type { ParsedManifest } from './manifest-parse.js';
import { urlKeyOf, type SegmentFacts, type SegmentUrlFacts } from './segment-facts.js';

/**
 * What every segment of a repaired recording holds, for the rewritten manifest's `VLinkBagSegments`: the facts the
 * manifest already had for a listed segment, else (a segment the interrupted recording left out, or a manifest
 * without facts) those of the segment itself, its first and last log time found by reading its frames once. `urls`
 * are the rewritten manifest's, whose indexes the facts name.
 */
export function recordingFacts(
  manifest: ParsedManifest,
  urls: readonly UrlMeta[],
  segments: readonly { name: string; reader: BackendReader; unlisted: boolean }[],
  flavor: ManifestFlavor,
): SegmentFacts[] {
  const indexOf = new Map(urls.map((u) => [urlKeyOf(u, flavor), u.index]));
  return segments.map((s) => {
    const known = s.unlisted ? undefined : manifest.segments?.find((f) => f.file === s.name);
    return known ?? scannedFacts(s.name, s.reader, manifest.startTimestamp, indexOf, flavor);
  });
}

function scannedFacts(
  name: string,
  reader: BackendReader,
  manifestStart: number,
  indexOf: ReadonlyMap<string, number>,
  flavor: ManifestFlavor,
): SegmentFacts {
  const info = reader.info();
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const frame of reader.frames({})) {
    if (frame.timestamp < first) first = frame.timestamp;
    if (frame.timestamp > last) last = frame.timestamp;
  }
  // A segment's frames are on its own start; the facts on the manifest's.
  const shiftUs = (info.startTimestamp - manifestStart) * 1000;
  const held = new Map<number, SegmentUrlFacts>();
  for (const u of info.urls) {
    const index = indexOf.get(urlKeyOf(u, flavor));
    if (u.count === 0 || index === undefined) continue;
    const c = held.get(index) ?? { index, count: 0, size: 0 };
    c.count += u.count;
    c.size += u.size;
    held.set(index, c);
  }
  const any = info.messageCount > 0 && first <= last;
  return {
    file: name,
    startTimestamp: info.startTimestamp,
    count: info.messageCount,
    begin: any ? Math.max(0, first + shiftUs) : 0,
    end: any ? Math.max(0, last + shiftUs) : 0,
    hasSchema: info.hasSchema,
    urls: [...held.values()].sort((a, b) => a.index - b.index),
    ...(info.counters ? { counters: info.counters } : {}),
  };
}
