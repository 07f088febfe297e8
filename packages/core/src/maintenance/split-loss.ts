import type { ManifestFlavor } from '../split/manifest.js';
import { parseManifest } from '../split/manifest-parse.js';
import { urlKeyOf } from '../split/segment-facts.js';
import type { UrlRepair } from './repair-report.js';

/** What a split repair has counted so far, over the segments it repaired; `addManifestLoss` adds to it. */
export interface SplitTotals {
  urls: UrlRepair[];
  /** Frames in the repaired segments. */
  frames: number;
  lostFrames: number;
  lostBytes: number;
}

/**
 * Adds to `totals` what the old manifest says the repair did not bring back. A segment the manifest lists that is
 * missing or could not be repaired adds nothing to the segment repairs' own counts, yet the manifest counted its
 * frames: its `VLinkBagSegments` entry says how many, per url, and those are lost. Without that entry (VLink's
 * manifests), a complete manifest's totals are the floor instead: a url, or the whole recording, that the manifest
 * counted more frames or bytes for than were recovered and counted lost lost at least the difference (the rule
 * single files follow for their header's counts). An interrupted recording's manifest counts only what it lists, so
 * it sets no floor; a manifest that does not parse says nothing.
 */
export function addManifestLoss(
  text: string,
  file: string,
  flavor: ManifestFlavor,
  gone: readonly string[],
  totals: SplitTotals,
): void {
  let manifest: ReturnType<typeof parseManifest>;
  try {
    manifest = parseManifest(text, file, flavor);
  } catch {
    return;
  }
  const byKey = new Map(totals.urls.map((u) => [urlKeyOf(u, flavor), u]));
  const entry = (meta: { url: string; action?: string }): UrlRepair => {
    const key = urlKeyOf(meta, flavor);
    let found = byKey.get(key);
    if (!found) {
      found = { url: meta.url, recoveredFrames: 0, recoveredBytes: 0, lostFrames: 0, lostBytes: 0 };
      if (flavor === 'vcapx') found.action = meta.action ?? 'Unknown';
      byKey.set(key, found);
      totals.urls.push(found);
    }
    return found;
  };
  const byIndex = new Map(manifest.urls.map((u) => [u.index, u]));
  for (const name of gone) {
    const facts = manifest.segments?.find((f) => f.file === name);
    if (!facts) continue;
    totals.lostFrames += facts.count;
    for (const u of facts.urls) {
      totals.lostBytes += u.size;
      const meta = byIndex.get(u.index);
      if (!meta) continue;
      const lost = entry(meta);
      lost.lostFrames += u.count;
      lost.lostBytes += u.size;
    }
  }
  if (!manifest.complete || manifest.problems.length > 0) return;
  for (const meta of manifest.urls) {
    const known = byKey.get(urlKeyOf(meta, flavor));
    const frames = meta.count - (known ? known.recoveredFrames + known.lostFrames : 0);
    const bytes = meta.size - (known ? known.recoveredBytes + known.lostBytes : 0);
    if (frames <= 0 && bytes <= 0) continue;
    const u = known ?? entry(meta);
    if (frames > 0) {
      u.lostFrames += frames;
      totals.lostFrames += frames;
    }
    if (bytes > 0) {
      u.lostBytes += bytes;
      totals.lostBytes += bytes;
    }
  }
  const unattributed = manifest.count - totals.frames - totals.lostFrames;
  if (unattributed > 0) totals.lostFrames += unattributed;
}
