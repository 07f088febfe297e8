import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';

/** A folder of our own under the temporary directory, for a copy a reader works from. */
export interface PrivateTempDir {
  readonly path: string;
  /** Removes the folder and what is in it (again: nothing happens). */
  remove(): void;
}

/** The folders not yet removed, removed when the process exits. */
const live = new Set<string>();
let sweepArmed = false;
/** Where this thread makes its folders: the temporary directory, or a folder its parent thread owns. */
let root: string | undefined;

/**
 * From now on this thread makes its private folders under `path`, a folder its parent made and removes when this
 * thread ends. For worker threads that are terminated (the HTTP server's bag workers, at its close or when a job
 * hangs one): neither their readers' `close()` nor an exit sweep runs then.
 */
export function usePrivateTempRoot(path: string): void {
  root = path;
}

function sweep(): void {
  for (const path of live) removeQuietly(path);
  live.clear();
}

function removeQuietly(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // the process is going away, or the folder is already gone: nothing to tell anyone
  }
}

/**
 * Makes `<tmpdir>/<prefix>XXXXXX`, removed by `remove()` or, when nobody calls it, as the process exits. The readers
 * that work from a private copy (a salvaged `.vdb`, a decompressed or WAL-mode rosbag2 storage, a merged bag to play)
 * remove it when they close; one that is never closed used to leave the copy, as large as the bag or more, in the
 * temporary directory. The exit sweep runs on a normal exit and on `process.exit()` (what the CLI's signal handlers
 * call), not on a crash or a `kill -9`: nothing runs then; nor in a worker thread that is terminated (see
 * `usePrivateTempRoot`).
 */
export function privateTempDir(prefix: string): PrivateTempDir {
  // A root handed down by the parent thread is made by the first copy that needs it (see `reservedTempDir`).
  if (root !== undefined) mkdirSync(root, { recursive: true, mode: 0o700 });
  return tracked(mkdtempSync(join(root ?? tmpdir(), prefix)));
}

/**
 * Like `privateTempDir`, but the folder is only named, not made: whoever uses it makes it (a worker thread's
 * `usePrivateTempRoot`), so a process killed by a signal, which runs no cleanup, leaves nothing when no copy was made
 * (found in CI: every HTTP server the benchmarks kill left one empty folder per bag worker).
 */
export function reservedTempDir(prefix: string): PrivateTempDir {
  return tracked(join(tmpdir(), `${prefix}${randomUUID().slice(0, 8)}`));
}

function tracked(path: string): PrivateTempDir {
  if (!sweepArmed) {
    sweepArmed = true;
    process.once('exit', sweep);
  }
  live.add(path);
  return {
    path,
    remove() {
      if (!live.delete(path)) return;
      rmSync(path, { recursive: true, force: true });
    },
  };
}
