import { backendFor, extensionOf } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { BagReader } from '../reader/bag-reader.js';
import type { RepairOptions, RepairReport, SalvageOptions, UrlRepair } from './repair-report.js';
import { replaceFile, type RepairFs } from './repair-fs.js';

// The repair of one file, shared by `repairBag` (repair.ts) and the segment loop of split recordings
// (repair-split.ts); apart from both so that neither imports the other.

/** One single file (a `.vdb`, a `.vcap`, or one segment of a split recording). */
export async function repairFile(
  path: string,
  options: RepairOptions & Pick<SalvageOptions, 'recordingStart'>,
  fs: RepairFs,
): Promise<RepairReport> {
  const backend = backendFor(path);
  if (!backend.salvage) {
    // Read-only formats are salvaged by copying: their readers read around damage with tryToFix.
    throw new BagError(
      'NOT_SUPPORTED',
      `the ${backend.name} backend cannot repair files; copy what can be read instead (tryToFix; vlink-bag clone --try-to-fix)`,
      { file: path },
    );
  }
  const destination = options.output ?? path;
  const temp = fs.siblingTemp(destination, extensionOf(path));
  try {
    const readableFrames = await countReadable(path);
    const salvage = await backend
      .salvage(path, temp, {
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
        ...(options.recordingStart === undefined ? {} : { recordingStart: options.recordingStart }),
      })
      .catch((error: unknown) => {
        throw ofInput(error, temp, path);
      });
    const verified = await verifyCopy(temp, path);
    const frames = verified.frames;
    const report: RepairReport = {
      path,
      output: destination,
      backup: undefined,
      replaced: false,
      readableFrames,
      frames,
      madeUpFrames: salvage.madeUpFrames ?? 0,
      bytes: salvage.urls.reduce((n, u) => n + u.recoveredBytes, 0),
      lostFrames: (salvage.unattributedLostFrames ?? 0) + salvage.urls.reduce((n, u) => n + u.lostFrames, 0),
      lostBytes: salvage.lostBytes,
      lostMetadata: salvage.lostMetadata ?? [],
      lossless: false,
      urls: salvage.urls,
      problems: salvage.problems,
    };
    report.lossless = report.lostFrames === 0 && report.lostBytes === 0 && report.lostMetadata.length === 0;
    if (frames < readableFrames - report.madeUpFrames && options.output === undefined) {
      throw new BagError(
        'CORRUPT_DATA',
        `the repaired copy holds ${frames} frames, fewer than the ${readableFrames - report.madeUpFrames} a reader can read from the file: left as it is`,
        { file: path },
      );
    }
    fs.fsyncFile(temp);
    if (options.output !== undefined) {
      fs.rename(temp, options.output);
      fs.fsyncDir(options.output);
    } else {
      report.backup = replaceFile(fs, path, temp, options.backup !== false);
      report.replaced = true;
    }
    return report;
  } finally {
    fs.remove(temp);
  }
}

/** The frames a reader gets from the file as it is: opened with `tryToFix`, read until the first damage. */
export async function countReadable(path: string): Promise<number> {
  let reader: BagReader;
  try {
    reader = await BagReader.create(path, { tryToFix: true });
  } catch {
    return 0;
  }
  let n = 0;
  try {
    for (reader.openCursor(); reader.next(); ) n++;
  } finally {
    reader.close();
  }
  return n;
}

/**
 * An error about the copy being built, said of the bag being repaired: the copy is a temporary file the user never
 * named, and it is removed before they read the message. A BagError keeps its code; anything else is INTERNAL.
 */
function ofInput(error: unknown, temp: string, path: string): BagError {
  if (!BagError.isInstance(error)) return BagError.wrap(error, 'INTERNAL', 'the repair failed', { file: path });
  if (error.file === undefined || !error.file.startsWith(temp)) return error;
  return new BagError(error.code, `the repaired copy: ${error.detail}`, {
    file: path,
    ...(error.url === undefined ? {} : { url: error.url }),
    cause: error,
  });
}

/** The repaired copy must open without `tryToFix` and pass the full check; failures name the input, `path`. */
async function verifyCopy(temp: string, path: string): Promise<{ frames: number }> {
  let reader: BagReader;
  try {
    reader = await BagReader.create(temp);
  } catch (error) {
    throw ofInput(BagError.wrap(error, 'INTERNAL', 'does not open', { file: temp }), temp, path);
  }
  try {
    const check = await reader.verify();
    if (!check.ok) {
      throw new BagError(
        'INTERNAL',
        `the repaired copy does not pass check: ${check.problems[0]?.message ?? 'unknown problem'}`,
        { file: path },
      );
    }
    return { frames: check.frames };
  } finally {
    reader.close();
  }
}

/** Sums reports of several files (the segments of a split recording). */
export function sumUrls(lists: readonly UrlRepair[][]): UrlRepair[] {
  const byKey = new Map<string, UrlRepair>();
  for (const list of lists) {
    for (const u of list) {
      const key = `${u.url}\x1f${u.action ?? ''}`;
      const known = byKey.get(key);
      if (!known) byKey.set(key, { ...u });
      else {
        known.recoveredFrames += u.recoveredFrames;
        known.recoveredBytes += u.recoveredBytes;
        known.lostFrames += u.lostFrames;
        known.lostBytes += u.lostBytes;
      }
    }
  }
  return [...byKey.values()];
}
