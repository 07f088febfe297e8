import { backendFor, extensionOf } from '../backend/registry.js';
import { BagError } from '../errors.js';
import type { Info } from '../model/info.js';
import { dumpJson, type JsonValue } from '../split/json-dump.js';
import { MANIFEST_FLOAT_KEYS, type ManifestFlavor } from '../split/manifest.js';
import { listedSegments } from '../split/manifest-parse.js';
import { addRecoveredTotals, recoveredUrlsJson } from '../split/segment-recovery.js';
import { recordingStart } from '../split/recording-start.js';
import { repeatsSegment } from '../split/repeated-segment.js';
import { splitPath, stemOf } from '../split/split-files.js';
import { unlistedSegmentNames } from '../split/segment-recovery.js';
import { BagReader } from '../reader/bag-reader.js';
import { repairFile, sumUrls } from './repair-file.js';
import { replaceFile, type RepairFs } from './repair-fs.js';
import { addManifestLoss, type SplitTotals } from './split-loss.js';
import type { RepairOptions, RepairReport } from './repair-report.js';

/**
 * A split recording: every segment the manifest lists, and those an interrupted recording left out of it, repaired
 * one by one as single files (each replaced only once its repaired copy passed check, or written next to `output`
 * as `<stem>.<n><ext>`); then a manifest whose totals are computed from the repaired segments (VLink's keys and
 * order, `complete: true`) replaces the old one the same way.
 */
export async function repairSplit(path: string, options: RepairOptions, fs: RepairFs): Promise<RepairReport> {
  const flavor: ManifestFlavor = extensionOf(path) === '.vcapx' ? 'vcapx' : 'vdbx';
  const segmentExt = flavor === 'vcapx' ? '.vcap' : '.vdb';
  const { dir, name } = splitPath(path);
  const text = fs.readText(path);
  const root = parseLoosely(text);
  const listed = listedSegments(text)?.names ?? [];
  const unlisted =
    root?.['VLinkHeader'] && (root['VLinkHeader'] as Record<string, unknown>)['complete'] === true
      ? []
      : unlistedSegmentNames(fs.list(dir), name, segmentExt, listed);
  // A damaged manifest may list a segment many times: each is repaired (and listed) once.
  const names = [...new Set([...listed, ...unlisted])].filter((n) => fs.exists(dir + n));
  const problems: string[] = [];
  // Listed segments the repair does not bring back: what the manifest says they held is lost (split-loss.ts).
  const gone = listed.filter((n) => !fs.exists(dir + n));
  for (const missing of gone) problems.push(`segment ${missing} is missing`);

  const output = options.output;
  const outDir = output === undefined ? dir : splitPath(output).dir;
  const outStem = output === undefined ? undefined : stemOf(splitPath(output).name);
  const segments: RepairReport[] = [];
  const kept: Array<{ name: string; source: string; info: Info; offsetUs: number }> = [];
  let firstStart: number | undefined;
  const oldStart = (root?.['VLinkHeader'] as Record<string, unknown> | undefined)?.['start_timestamp'];
  const manifestStart = typeof oldStart === 'number' && Number.isSafeInteger(oldStart) && oldStart > 0 ? oldStart : 0;
  for (const [index, segment] of names.entries()) {
    // A segment's own progress becomes a fraction of its place in the recording.
    const progress = options.onProgress;
    const inSegment = (p: { done: number; total: number }) =>
      progress?.({
        done: index + (p.total > 0 ? Math.min(1, p.done / p.total) : 1),
        total: names.length,
        unit: 'segments',
      });
    const outName = outStem === undefined ? segment : `${outStem}.${kept.length + 1}${segmentExt}`;
    let report: RepairReport;
    try {
      report = await repairFile(
        dir + segment,
        {
          ...(output === undefined ? {} : { output: outDir + outName }),
          backup: options.backup !== false,
          ...(progress ? { onProgress: inSegment } : {}),
          // A segment whose header lost or garbled the start takes the manifest's (every segment has that start).
          ...(manifestStart > 0 ? { recordingStart: manifestStart } : {}),
        },
        fs,
      );
    } catch (error) {
      progress?.({ done: index + 1, total: names.length, unit: 'segments' });
      problems.push(
        `segment ${segment} could not be repaired: ${error instanceof Error ? error.message : String(error)}`,
      );
      gone.push(segment);
      continue;
    }
    progress?.({ done: index + 1, total: names.length, unit: 'segments' });
    const info = await segmentInfo(outDir + outName);
    const repeats = kept.find((k) => repeatsSegment(info, k.info));
    if (repeats !== undefined) {
      // A copy of a segment kept before it: its own frames are gone (what the manifest said it held counts as lost).
      problems.push(`segment ${segment} repeats ${repeats.source} (its start, duration and count): left out`);
      gone.push(segment);
      if (output !== undefined) fs.remove(outDir + outName);
      continue;
    }
    segments.push(report);
    // The same base as the reader's (recording-start.ts), or the rebuilt manifest would disagree with the segments.
    firstStart ??= recordingStart(info.startTimestamp, manifestStart);
    kept.push({
      name: outName,
      source: segment,
      info,
      offsetUs: flavor === 'vcapx' ? (info.startTimestamp - firstStart) * 1000 : 0,
    });
  }
  if (kept.length === 0)
    throw new BagError('CORRUPT_FILE', 'no segment of the recording could be repaired', { file: path });

  const manifestText = rebuiltManifest(root, kept, flavor);
  const destination = output ?? path;
  const temp = fs.siblingTemp(destination, extensionOf(path));
  let backup: string | undefined;
  try {
    fs.writeText(temp, manifestText);
    const check = await verifyManifest(temp);
    if (!check.ok)
      throw new BagError('INTERNAL', `the repaired manifest does not pass check: ${check.first}`, { file: path });
    if (output !== undefined) {
      fs.rename(temp, output);
      fs.fsyncDir(output);
    } else backup = replaceFile(fs, path, temp, options.backup !== false);
  } finally {
    fs.remove(temp);
  }
  const totals: SplitTotals = {
    urls: sumUrls(segments.map((s) => s.urls)),
    frames: segments.reduce((n, s) => n + s.frames, 0),
    lostFrames: segments.reduce((n, s) => n + s.lostFrames, 0),
    lostBytes: segments.reduce((n, s) => n + s.lostBytes, 0),
  };
  addManifestLoss(text, path, flavor, gone, totals);
  const report: RepairReport = {
    path,
    output: destination,
    backup,
    replaced: output === undefined,
    readableFrames: segments.reduce((n, s) => n + s.readableFrames, 0),
    frames: totals.frames,
    madeUpFrames: segments.reduce((n, s) => n + s.madeUpFrames, 0),
    bytes: segments.reduce((n, s) => n + s.bytes, 0),
    lostFrames: totals.lostFrames,
    lostBytes: totals.lostBytes,
    lostMetadata: segments.flatMap((s) => s.lostMetadata.map((m) => `${splitPath(s.path).name}: ${m}`)),
    lossless: false,
    urls: totals.urls,
    problems: [...problems, ...segments.flatMap((s) => s.problems.map((p) => `${splitPath(s.path).name}: ${p}`))],
    segments,
  };
  // A segment that lost only bookkeeping (a url's name) is not lossless, nor is the recording.
  report.lossless =
    problems.length === 0 && segments.every((s) => s.lossless) && totals.lostFrames === 0 && totals.lostBytes === 0;
  return report;
}

async function segmentInfo(path: string): Promise<Info> {
  const reader = await backendFor(path).openReader(path, { readOnly: true, tryToFix: false });
  try {
    return reader.info();
  } finally {
    reader.close();
  }
}

async function verifyManifest(path: string): Promise<{ ok: boolean; first: string }> {
  const reader = await BagReader.create(path);
  try {
    const report = await reader.verify({ quick: true });
    return { ok: report.ok, first: report.problems[0]?.message ?? '' };
  } finally {
    reader.close();
  }
}

function parseLoosely(text: string): Record<string, unknown> | undefined {
  try {
    const root = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
    return typeof root === 'object' && root !== null && !Array.isArray(root)
      ? (root as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The manifest for the repaired segments: the old header's keys where they hold values of the right kind, else the
 * first segment's; count, duration and every url's totals from the segments; `complete: true`; the segments listed.
 */
function rebuiltManifest(
  root: Record<string, unknown> | undefined,
  segments: ReadonlyArray<{ name: string; info: Info; offsetUs: number }>,
  flavor: ManifestFlavor,
): string {
  const first = segments[0]!.info;
  const old = (root?.['VLinkHeader'] ?? {}) as Record<string, unknown>;
  const int = (key: string, fallback: number) => {
    const v = old[key];
    return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : fallback;
  };
  const str = (key: string, fallback: string) => (typeof old[key] === 'string' ? (old[key] as string) : fallback);
  const [major, minor, patch] = first.version.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const totals = addRecoveredTotals(
    {
      version: undefined,
      count: 0,
      duration: 0,
      accuracy: '',
      compress: '',
      process: '',
      date: '',
      tag: '',
      complete: true,
      timezone: 0,
      startTimestamp: 0,
      splitBySize: 0,
      splitByTime: 0,
      urls: [],
      files: [],
      segments: undefined,
      problems: [],
    },
    segments,
    flavor,
  );
  const header: { [key: string]: JsonValue } = {
    major: int('major', major ?? 2),
    minor: int('minor', minor ?? 0),
    patch: int('patch', patch ?? 0),
    count: totals.count,
    duration: totals.duration,
    accuracy: str('accuracy', first.timeAccuracy),
    compress: str('compress', first.compressionType),
    process: str('process', first.processName),
    date: str('date', first.dateTime),
    tag: str('tag', first.tagName),
    split_by_size: int('split_by_size', 0),
    split_by_time: int('split_by_time', 0),
    complete: true,
    timezone:
      typeof old['timezone'] === 'number' && Number.isSafeInteger(old['timezone'])
        ? (old['timezone'] as number)
        : first.timezone,
    start_timestamp: int('start_timestamp', first.startTimestamp),
  };
  const manifest = {
    VLinkHeader: header,
    VLinkUrls: recoveredUrlsJson(totals, flavor),
    VLinkFiles: segments.map((s) => s.name),
  };
  return dumpJson(manifest, { floatKeys: MANIFEST_FLOAT_KEYS });
}
