import { BagError } from '../errors.js';
import { listedSegments } from './manifest-parse.js';
import type { SplitFiles } from './split-files.js';

/*
 * What a split writer finds on disk where it is about to write: an old recording at the manifest's path, which VLink
 * replaces, and files at the names of new segments, which it overwrites unless told not to.
 */

/**
 * Spec §4.2 step 5: deletes the old manifest's bare-named segments from its directory (`dir`, with its separator),
 * then the manifest. An old manifest that does not parse keeps its segments (nothing says which files are its own).
 */
export function removeOldRecording(
  files: SplitFiles,
  path: string,
  dir: string,
  warn: (message: string) => void,
  remove: (path: string) => void,
): void {
  if (!files.exists(path)) return;
  let listed: ReturnType<typeof listedSegments>;
  try {
    listed = listedSegments(files.readText(path));
  } catch (error) {
    listed = undefined;
    warn(`cannot read the old manifest ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (listed === undefined) warn(`the old manifest ${path} does not parse; its segments are left in place`);
  else {
    for (const name of listed.names) remove(dir + name);
    for (const entry of listed.skipped)
      warn(`old manifest ${path} lists ${JSON.stringify(entry)}, not a plain file name; not deleted`);
  }
  files.remove(path);
}

/**
 * With `overwriteSegments: false`, a file already at a new segment's name (an unrelated bag, another recording's
 * time-named segment) is refused with `IO_ERROR` rather than replaced. Checked when the segment is opened: a
 * time-named segment has no name before then.
 */
export function refuseExistingSegment(files: SplitFiles, path: string, overwrite: boolean): void {
  if (overwrite !== false || !files.exists(path)) return;
  throw new BagError(
    'IO_ERROR',
    'a file already exists where the next segment would be written; it is not overwritten',
    { file: path },
  );
}
