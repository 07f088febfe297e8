import type { BackendReader } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { ReaderOptions } from '../model/config.js';
import type { Info } from '../model/info.js';
import { infoProblems, problemsRecord } from '../model/info-problems.js';
import type { ParsedManifest } from './manifest-parse.js';
import { repeatedSegment } from './repeated-segment.js';
import type { SequencedSegment } from './segment-sequence.js';
import { addRecoveredTotals } from './segment-recovery.js';
import { deriveSegment, type SegmentFacts } from './segment-facts.js';
import { splitPath, type SplitFiles } from './split-files.js';
import type { SplitReaderFormat } from './split-format.js';

/** A segment reader of a split recording, and whether the manifest lists it. */
export interface OpenedSegment {
  name: string;
  reader: BackendReader;
  /** Not in the manifest's `VLinkFiles` (left out by an interrupted recording). */
  unlisted: boolean;
}

/** A listed segment that does not open: `CORRUPT_FILE` naming it, but a version or driver problem as it is. */
export function segmentUnreadable(error: unknown, name: string, path: string): BagError {
  if (BagError.isInstance(error) && (error.code === 'VERSION_MISMATCH' || error.code === 'DRIVER_MISSING'))
    return error;
  return BagError.wrap(error, 'CORRUPT_FILE', `segment "${name}" listed in the manifest cannot be read`, {
    file: path,
  });
}

/** Opens every named segment at once (a lazy reader whose caller needs them all); all or none. */
export function openEverySync(
  names: readonly string[],
  dir: string,
  openSync: (path: string, options: ReaderOptions) => BackendReader,
  options: ReaderOptions,
): OpenedSegment[] {
  const opened: OpenedSegment[] = [];
  try {
    for (const name of names) {
      try {
        opened.push({ name, reader: openSync(dir + name, options), unlisted: false });
      } catch (error) {
        throw segmentUnreadable(error, name, dir + name);
      }
    }
  } catch (error) {
    for (const o of opened) o.reader.close();
    throw error;
  }
  return opened;
}

/**
 * Opens the listed segments in manifest order into `opened` (the caller closes them if it fails later). Without
 * `tryToFix` a segment that does not open fails the whole; with it, one that does not open, or that repeats an
 * earlier one (`repeatedSegment`), is left out and why is added to `skipped`.
 */
export async function openListed(
  names: readonly string[],
  dir: string,
  format: SplitReaderFormat,
  options: ReaderOptions,
  opened: OpenedSegment[],
  skipped: string[],
): Promise<void> {
  const tryToFix = options.tryToFix === true;
  for (const name of names) {
    let reader: BackendReader;
    try {
      reader = await format.openSegment(dir + name, options);
    } catch (error) {
      if (!tryToFix) throw segmentUnreadable(error, name, dir + name);
      skipped.push(`segment "${name}" could not be opened`);
      continue;
    }
    const repeats = tryToFix ? repeatedSegment(opened, reader) : undefined;
    if (repeats === undefined) opened.push({ name, reader, unlisted: false });
    else {
      reader.close();
      skipped.push(`segment "${name}" repeats "${repeats}" (its start, duration and count)`);
    }
  }
}

/**
 * Opens the unlisted segments in order with `options` and keeps those that belong to this recording: same process,
 * and a start no earlier than the recording's (`.vdbx` segments carry the recording's start itself) or the segment
 * before. Stops at the first that does not open or does not belong (a stale file of another recording).
 */
export async function openUnlisted(
  names: readonly string[],
  dir: string,
  format: SplitReaderFormat,
  options: ReaderOptions,
  manifest: ParsedManifest,
  before: readonly OpenedSegment[],
): Promise<OpenedSegment[]> {
  const out: OpenedSegment[] = [];
  let previousStart =
    before.length > 0 ? before[before.length - 1]!.reader.info().startTimestamp : manifest.startTimestamp;
  for (const name of names) {
    let reader: BackendReader;
    try {
      reader = await format.openSegment(dir + name, options);
    } catch {
      break;
    }
    const info = reader.info();
    const start = info.startTimestamp;
    const belongs =
      info.processName === manifest.process &&
      (format.rebaseOnFirstSegment
        ? start >= manifest.startTimestamp && start >= previousStart
        : start === manifest.startTimestamp);
    if (!belongs) {
      reader.close();
      break;
    }
    previousStart = start;
    out.push({ name, reader, unlisted: true });
  }
  return out;
}

export function buildInfo(
  path: string,
  format: SplitReaderFormat,
  m: ParsedManifest,
  opened: readonly OpenedSegment[],
  sequence: readonly SequencedSegment[],
  files: SplitFiles,
  skipped: readonly string[],
): Info {
  const { dir } = splitPath(path);
  const segmentInfos = opened.map((o) => o.reader.info());
  // What a tryToFix read went around, segment by segment (a segment's reader lists its own: a `.vcap` chunk that
  // does not read, a damaged `.vdb` read from its salvaged copy), and the segments it left out: without them, a copy
  // of a split recording with one damaged segment lost frames without a word (126 of 3,000 in a .vcapx, 256 in a
  // .vdbx, found by hand once the segments read around their damage).
  const readAround = [
    ...skipped.map((why) => `${why}: skipped`),
    ...opened.flatMap((o, i) => infoProblems(segmentInfos[i]!).map((problem) => `${o.name}: ${problem}`)),
  ];
  const recovered = opened
    .map((o, i) => ({ name: o.name, info: segmentInfos[i]!, offsetUs: sequence[i]!.offsetUs, unlisted: o.unlisted }))
    .filter((r) => r.unlisted);
  // A manifest whose bookkeeping cannot be true is not believed: the totals come from the segments themselves.
  // Nor when a segment was read around: the segments then count what they read.
  const totals =
    m.problems.length > 0 || readAround.length > 0
      ? segmentTotals(m, opened, segmentInfos, sequence, format)
      : recovered.length > 0
        ? addRecoveredTotals(m, recovered, format.flavor)
        : { count: m.count, duration: m.duration, urls: m.urls };
  // The first message's offset: the earliest over segments that hold messages (an empty segment has no first row).
  const withMessages = segmentInfos.filter((i) => i.messageCount > 0);
  return assembleInfo(path, format, m, totals, {
    version: segmentInfos[0]!.version,
    blankDuration: withMessages.length > 0 ? Math.min(...withMessages.map((i) => i.blankDuration)) : 0,
    hasCompleted: m.complete && readAround.length === 0 && m.problems.length === 0,
    splitCount: opened.length,
    hasSchema: segmentInfos.some((i) => i.hasSchema),
    fileSize: opened.reduce((sum, o) => sum + Math.max(0, files.size(dir + o.name)), 0),
    // The recording's drop counters are stored in the segment open at close: the last one that has them.
    counters: lastCounters(segmentInfos.map((i) => i.counters)),
    metadata: problemsRecord(format.flavor, readAround),
  });
}

/**
 * The `Info` of a recording whose manifest says what each segment holds (`VLinkBagSegments`): no segment is opened.
 * The values are those `buildInfo` computes from the opened segments when the facts are true.
 */
export function buildInfoFromFacts(
  path: string,
  format: SplitReaderFormat,
  m: ParsedManifest,
  facts: readonly SegmentFacts[],
  files: SplitFiles,
): Info {
  const { dir } = splitPath(path);
  const withMessages = facts.filter((f) => f.count > 0);
  return assembleInfo(
    path,
    format,
    m,
    { count: m.count, duration: m.duration, urls: m.urls },
    {
      version: '0.0.0',
      blankDuration:
        withMessages.length > 0
          ? Math.min(...withMessages.map((f) => deriveSegment(f, m.startTimestamp).blankDuration))
          : 0,
      hasCompleted: m.complete && m.problems.length === 0,
      splitCount: facts.length,
      hasSchema: facts.some((f) => f.hasSchema),
      fileSize: facts.reduce((sum, f) => sum + Math.max(0, files.size(dir + f.file)), 0),
      counters: lastCounters(facts.map((f) => f.counters)),
    },
  );
}

/** What the segments add to the manifest's values in `Info`. */
interface SegmentsPart {
  /** The first segment's version, reported when the manifest has none. */
  version: string;
  blankDuration: number;
  hasCompleted: boolean;
  splitCount: number;
  hasSchema: boolean;
  fileSize: number;
  counters: Info['counters'];
  /** The `<flavor>.problems` record of what a tryToFix read went around (none from a manifest's facts alone). */
  metadata?: Info['metadata'];
}

function assembleInfo(
  path: string,
  format: SplitReaderFormat,
  m: ParsedManifest,
  totals: { count: number; duration: number; urls: Info['urls'] },
  part: SegmentsPart,
): Info {
  const urls = format.sortUrls ? format.sortUrls(totals.urls) : totals.urls;
  return {
    path,
    format: format.flavor,
    version: m.version ? `${m.version.major}.${m.version.minor}.${m.version.patch}` : part.version,
    storageType: format.storageType,
    messageCount: totals.count,
    totalDuration: Math.trunc(totals.duration / 1000),
    blankDuration: part.blankDuration,
    timeAccuracy: m.accuracy,
    compressionType: m.compress,
    processName: m.process,
    dateTime: m.date,
    tagName: m.tag,
    hasCompleted: part.hasCompleted,
    timezone: m.timezone,
    startTimestamp: m.startTimestamp,
    splitCount: part.splitCount,
    splitBySize: m.splitBySize,
    splitByTime: m.splitByTime,
    hasSchema: part.hasSchema,
    totalRawSize: totals.urls.reduce((sum, u) => sum + u.size, 0),
    fileSize: part.fileSize,
    urls,
    ...(part.counters ? { counters: part.counters } : {}),
    ...(part.metadata?.length ? { metadata: part.metadata } : {}),
  };
}

/** The last table among the segments' drop counters (the segment open at close stores the recording's). */
function lastCounters(tables: readonly Info['counters'][]): Info['counters'] {
  for (let i = tables.length - 1; i >= 0; i--) if (tables[i]) return tables[i];
  return undefined;
}

/** Count, duration and url totals of a recording computed from its segments alone. */
export function segmentTotals(
  m: ParsedManifest,
  opened: readonly OpenedSegment[],
  infos: readonly Info[],
  sequence: readonly SequencedSegment[],
  format: SplitReaderFormat,
): { count: number; duration: number; urls: Info['urls'] } {
  return addRecoveredTotals(
    { ...m, count: 0, duration: 0, urls: [] },
    opened.map((o, i) => ({ name: o.name, info: infos[i]!, offsetUs: sequence[i]!.offsetUs })),
    format.flavor,
  );
}
