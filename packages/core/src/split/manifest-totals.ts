import type { ProblemList } from '../maintenance/check-report.js';
import type { UrlMeta } from '../model/info.js';
import type { ParsedManifest } from './manifest-parse.js';
import type { SequencedSegment } from './segment-sequence.js';
import type { SplitReaderFormat } from './split-format.js';
import { segmentTotals, type OpenedSegment } from './split-segments.js';
import { factsDisagreement, urlKeyOf } from './segment-facts.js';
import type { ManifestFlavor } from './manifest.js';
import { splitPath } from './split-files.js';

/**
 * The manifest's bookkeeping against the totals of the segments it lists (part of `SplitReader.verify`): its count,
 * its duration (to the millisecond the segments report) and every url's count and size; a url the segments hold and
 * the manifest does not is a problem too. `.vcapx` counts per (url, action), as its manifest does.
 */
export function compareManifestTotals(
  problems: ProblemList,
  manifest: ParsedManifest,
  opened: readonly OpenedSegment[],
  sequence: readonly SequencedSegment[],
  format: SplitReaderFormat,
): void {
  const infos = opened.map((o) => o.reader.info());
  const totals = segmentTotals(manifest, opened, infos, sequence, format);
  const m = manifest;
  if (m.count !== totals.count) problems.add(`manifest count is ${m.count}, the segments hold ${totals.count}`);
  // Segments report their duration in ms: the manifest's µs must fall inside that millisecond.
  if (m.duration < totals.duration || m.duration >= totals.duration + 1000)
    problems.add(`manifest duration is ${m.duration} µs, the segments end at ${totals.duration} µs`);
  const key = (u: UrlMeta) => urlKeyOf(u, format.flavor);
  const counted = new Map(totals.urls.map((u) => [key(u), u]));
  for (const u of m.urls) {
    const c = counted.get(key(u));
    counted.delete(key(u));
    if ((c?.count ?? 0) !== u.count || (c?.size ?? 0) !== u.size)
      problems.add(
        `manifest says ${u.count} frames (${u.size} bytes), the segments hold ${c?.count ?? 0} (${c?.size ?? 0} bytes)`,
        { url: u.url },
      );
  }
  for (const c of counted.values())
    if (c.count > 0) problems.add(`${c.count} frames in the segments, none in the manifest`, { url: c.url });
}

/** Every listed segment against what the manifest's `VLinkBagSegments` says it holds (part of `SplitReader.verify`). */
export function compareSegmentFacts(
  problems: ProblemList,
  path: string,
  manifest: ParsedManifest,
  opened: readonly OpenedSegment[],
  flavor: ManifestFlavor,
): void {
  const facts = manifest.segments;
  if (!facts) return;
  const keys = new Map(manifest.urls.map((u) => [u.index, urlKeyOf(u, flavor)]));
  const { dir } = splitPath(path);
  for (const o of opened) {
    const f = o.unlisted ? undefined : facts.find((x) => x.file === o.name);
    if (!f) continue;
    const wrong = factsDisagreement(f, o.reader.info(), manifest.startTimestamp, (index) => keys.get(index), flavor);
    if (wrong !== undefined)
      problems.add(`manifest: VLinkBagSegments entry of ${o.name} is wrong: ${wrong}`, { file: dir + o.name });
  }
}
