import { statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BagError, type ReaderOptions, type SalvageResult } from '@vlink/bag-core';
import { privateTempDir } from '@vlink/bag-core/internal';
import type { SqliteDriver } from '../driver/driver.js';
import { VdbReader } from './reader.js';
import { salvageVdb } from './salvage.js';

/** How many of the salvage's own lines the problems repeat (it keeps up to 100; `fix` prints them all). */
const SALVAGE_LINES = 5;

/**
 * Opens a `.vdb` to read. With `tryToFix` (read-only), the file is read through once at open. When the read cannot
 * reach the end (SQLite stops at a damaged page, a row no writer wrote or a payload that does not decode ends it, a
 * closed file's index gives fewer rows than its header counts) or the file does not open at all (cut short), it is
 * read as `fix` would repair it: salvaged (`salvageVdb`, which walks past damaged pages by rowid) into a private copy
 * in the temp directory, deleted at close (or as the process exits), and read from there; `info()` says what was read around and lost under
 * `vdb.problems`, with `hasCompleted: false`. Before, such a read ended at the damage without a word (found by hand:
 * 4 KiB zeroed in the middle of a 2,000-frame `.vdb`, and `clone --try-to-fix` copied 730 frames and said nothing of
 * the others). Costs a read of the file at open, and for a damaged file a copy of it on disk.
 */
export function openVdbReader(driver: SqliteDriver, path: string, options: ReaderOptions): VdbReader {
  if (options.tryToFix !== true || options.readOnly === false) return VdbReader.open(driver, path, options);
  let why: string;
  try {
    const reader = VdbReader.open(driver, path, options);
    const stopped = readThroughOrClose(reader);
    if (stopped === undefined) return reader;
    why = `the read stops at damage (${stopped})`;
  } catch (error) {
    if (!BagError.isInstance(error) || error.code !== 'CORRUPT_FILE') throw error;
    why = `the file does not open (${error.detail})`;
  }
  return openSalvaged(driver, path, why);
}

function readThroughOrClose(reader: VdbReader): string | undefined {
  try {
    const stopped = reader.readThrough();
    if (stopped !== undefined) reader.close();
    return stopped;
  } catch (error) {
    reader.close();
    throw error;
  }
}

function openSalvaged(driver: SqliteDriver, path: string, why: string): VdbReader {
  const dir = privateTempDir('vlink-vdb-read-around-');
  const cleanup = () => dir.remove();
  try {
    const copy = join(dir.path, basename(path).endsWith('.vdb') ? basename(path) : 'salvaged.vdb');
    const result = salvageVdb(driver, path, copy);
    const problems = [`${why}: read as fix would repair it, from a salvaged copy`, ...lossLines(result)];
    return VdbReader.openCopy(driver, copy, { name: path, fileSize: statSync(path).size, problems, cleanup });
  } catch (error) {
    cleanup();
    throw error;
  }
}

/** What the salvage kept and lost, in the words of `fix`'s report: totals, per url, and its first lines. */
function lossLines(result: SalvageResult): string[] {
  const read = result.urls.reduce((n, u) => n + u.recoveredFrames, 0);
  const lost = result.urls.reduce((n, u) => n + u.lostFrames, 0) + (result.unattributedLostFrames ?? 0);
  const lines = [`${read} frames read, ${lost} lost (${result.lostBytes} bytes of the file not used)`];
  for (const u of result.urls) if (u.lostFrames > 0) lines.push(`${u.url}: ${u.lostFrames} frames lost`);
  for (const what of result.lostMetadata ?? []) lines.push(`lost: ${what}`);
  lines.push(...result.problems.slice(0, SALVAGE_LINES));
  if (result.problems.length > SALVAGE_LINES) lines.push(`… ${result.problems.length - SALVAGE_LINES} more`);
  return lines;
}
