import type { Info, UrlMeta } from '../model/info.js';
import { schemaTypeLabel } from '../model/schema-type.js';
import { dumpJson, type JsonValue } from './json-dump.js';
import { MANIFEST_FLOAT_KEYS, manifestUrlJson, type ManifestFlavor } from './manifest.js';
import type { ParsedManifest } from './manifest-parse.js';
import { parseJsonObject } from './manifest-parse.js';
import { stemOf } from './split-files.js';
import { segmentFactsJson, type SegmentFacts, urlKeyOf } from './segment-facts.js';

/*
 * A split recording that was interrupted (power loss, kill -9) leaves the segment it was writing out of the manifest:
 * the writer lists a segment only once it is closed (format reference §4.2). A crash in the middle of a split can leave two (the
 * closed old one and the new open one). This module finds those files and folds them into the manifest's totals.
 */

const TIME_NAME = /^(\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d{3})(?:\.(\d+))?$/;

/**
 * The segment files a crashed recording wrote after the last listed one, in recording order. `names` is the manifest
 * directory's listing. Segments are named `<stem>.<n><ext>` or by time (`YYYY-MM-DD_hh-mm-ss-mmm[.n]<ext>`, format reference
 * §4.3), and the naming scheme is not recorded in the manifest, so the listed names decide it (both when none is
 * listed). Index names must continue the listed sequence without a gap (a stale `<stem>.7.vdb` of an older recording
 * is not picked up after `.2`); time names must sort after the last listed one. The caller still checks each
 * candidate's start timestamp against the manifest before it uses it.
 */
export function unlistedSegmentNames(
  names: readonly string[],
  manifestName: string,
  segmentExtension: string,
  listed: readonly string[],
): string[] {
  const stem = stemOf(manifestName);
  const listedSet = new Set(listed);
  const indexOf = (name: string): number | undefined => {
    if (!name.startsWith(`${stem}.`) || !name.endsWith(segmentExtension)) return undefined;
    const digits = name.slice(stem.length + 1, name.length - segmentExtension.length);
    return /^[1-9]\d{0,8}$/.test(digits) ? Number(digits) : undefined;
  };
  const timeKeyOf = (name: string): [string, number] | undefined => {
    if (!name.endsWith(segmentExtension)) return undefined;
    const match = TIME_NAME.exec(name.slice(0, name.length - segmentExtension.length));
    return match ? [match[1]!, match[2] === undefined ? 0 : Number(match[2])] : undefined;
  };
  const byIndex = listed.length === 0 || listed.some((name) => indexOf(name) !== undefined);
  const byTime = listed.length === 0 || listed.some((name) => timeKeyOf(name) !== undefined);
  const found: string[] = [];

  if (byIndex) {
    const present = new Set(names.filter((name) => !listedSet.has(name)));
    let next = Math.max(0, ...listed.map((name) => indexOf(name) ?? 0)) + 1;
    for (
      let name = `${stem}.${next}${segmentExtension}`;
      present.has(name);
      name = `${stem}.${++next}${segmentExtension}`
    )
      found.push(name);
  }
  if (byTime && found.length === 0) {
    const compare = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]);
    const lastListed = listed
      .map(timeKeyOf)
      .filter((key) => key !== undefined)
      .sort(compare)
      .pop();
    const candidates = names
      .filter((name) => !listedSet.has(name))
      .map((name) => ({ name, key: timeKeyOf(name) }))
      .filter(
        (c): c is { name: string; key: [string, number] } =>
          c.key !== undefined && (!lastListed || compare(c.key, lastListed) > 0),
      )
      .sort((a, b) => compare(a.key, b.key));
    found.push(...candidates.map((c) => c.name));
  }
  return found;
}

/** A recovered segment: its file name and what its reader reports, with its offset on the recording's time base. */
export interface RecoveredSegment {
  name: string;
  info: Info;
  /** µs from the recording start to the segment's time base (`.vcapx`), 0 when its timestamps already are (`.vdbx`). */
  offsetUs: number;
}

/** The manifest's totals with the recovered segments added. */
export interface RecoveredTotals {
  count: number;
  /** µs. */
  duration: number;
  urls: UrlMeta[];
}

/**
 * Adds the recovered segments' messages to the manifest's totals. A url is matched by name (`.vdbx`) or by name and
 * action (`.vcapx`); one the manifest does not know is appended, keeping its segment's index when that is free (a
 * `.vdbx` segment's url ids are the recording's). A url's rate over both parts is its count over the sum of each
 * part's span (count / freq): the gap between the parts is not known without reading every frame.
 */
export function addRecoveredTotals(
  manifest: ParsedManifest,
  recovered: readonly RecoveredSegment[],
  flavor: ManifestFlavor,
): RecoveredTotals {
  const keyOf = (u: UrlMeta) => urlKeyOf(u, flavor);
  const urls = manifest.urls.map((u) => ({ ...u }));
  const byKey = new Map(urls.map((u) => [keyOf(u), u]));
  const usedIndexes = new Set(urls.map((u) => u.index));
  let count = manifest.count;
  let duration = manifest.duration;
  for (const segment of recovered) {
    // Recovered segments are opened with tryToFix, so their readers count what an unfinished file holds.
    count += segment.info.messageCount;
    if (segment.info.messageCount > 0)
      duration = Math.max(duration, segment.offsetUs + segment.info.totalDuration * 1000);
    for (const meta of segment.info.urls) {
      if (meta.count === 0) continue;
      const known = byKey.get(keyOf(meta));
      if (known) {
        const span = spanSeconds(known) + spanSeconds(meta);
        known.count += meta.count;
        known.size += meta.size;
        known.freq = span > 0 ? known.count / span : 0;
        continue;
      }
      let index = meta.index;
      if (usedIndexes.has(index) || index < 0) index = Math.max(-1, ...usedIndexes) + 1;
      usedIndexes.add(index);
      const added: UrlMeta = { ...meta, index };
      if (flavor === 'vcapx') added.action = meta.action ?? 'Unknown';
      else delete added.action;
      urls.push(added);
      byKey.set(keyOf(added), added);
    }
  }
  return { count, duration, urls };
}

/** Seconds a url's messages span in one part, from VLink's rate (count / span). */
function spanSeconds(u: UrlMeta): number {
  return u.freq > 0 ? u.count / u.freq : 0;
}

/** The `VLinkUrls` entries of recovered totals (a url's `encoding` is its schema type's label). */
export function recoveredUrlsJson(totals: RecoveredTotals, flavor: ManifestFlavor): JsonValue[] {
  return totals.urls.map((u) => manifestUrlJson({ ...u, encoding: schemaTypeLabel(u.schemaType) }, flavor));
}

/**
 * The manifest text after a repair: totals and urls from `totals`, the recovered segment names appended to
 * `VLinkFiles`, `complete: true`, and what every segment holds (`VLinkBagSegments`) when `segments` is given. Every other key keeps its value and place (VLink's key order, doubles stay doubles).
 */
export function repairedManifestText(
  text: string,
  file: string,
  totals: RecoveredTotals,
  appended: readonly string[],
  flavor: ManifestFlavor,
  segments?: readonly SegmentFacts[],
): string {
  const root = parseJsonObject(text, file);
  const header = root['VLinkHeader'] as Record<string, unknown>;
  header['count'] = totals.count;
  header['duration'] = totals.duration;
  header['complete'] = true;
  root['VLinkUrls'] = recoveredUrlsJson(totals, flavor);
  root['VLinkFiles'] = [...(root['VLinkFiles'] as string[]), ...appended];
  if (segments) root['VLinkBagSegments'] = segments.map(segmentFactsJson);
  return dumpJson(root as { [key: string]: JsonValue }, { floatKeys: MANIFEST_FLOAT_KEYS });
}
