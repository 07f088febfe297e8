import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { listedSegments } from '@vlink/bag-core/internal';
import { isSplit } from './split-output.js';

/** SQLite's files beside a `.vdb` (a copy that stopped may leave its journal). */
const SQLITE_SIDECARS = ['-journal', '-wal', '-shm'];

/**
 * Deletes what a copy that failed wrote to `path`, so that nothing at the output looks like a complete bag: the file
 * or manifest, its summary sidecar (`<path>.json`) and, for a split output, the segments its manifest lists. Only
 * listed segments: a file that merely has a segment's name (one the writer refused to overwrite) is not the copy's.
 * Returns false when something could not be deleted.
 */
export function removePartialOutput(path: string): boolean {
  const files = [path, `${path}.json`, `${path}.tmp`, ...SQLITE_SIDECARS.map((s) => path + s)];
  if (isSplit(path)) {
    let names: string[] = [];
    try {
      names = listedSegments(readFileSync(path, 'utf8'))?.names ?? [];
    } catch {
      // No manifest (the writer never started, or took it back): no segments of ours either.
    }
    const dir = dirname(path);
    for (const name of names) files.push(join(dir, name), ...SQLITE_SIDECARS.map((s) => join(dir, name) + s));
  }
  let removed = true;
  // The manifest last: while it is there, it names the segments still to delete.
  for (const file of files.slice(1).concat(path)) {
    try {
      rmSync(file, { force: true });
    } catch {
      removed = false;
    }
  }
  return removed;
}
