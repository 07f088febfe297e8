import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
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
 * `usePrivateTempRoot`). For those, each folder names its process (`OWNER_FILE`), and the next process's first
 * folder removes the ones whose process is gone (`sweepAbandonedTempDirs`).
 */
export function privateTempDir(prefix: string): PrivateTempDir {
  // A root handed down by the parent thread is made by the first copy that needs it (see `reservedTempDir`).
  if (root !== undefined) {
    if (!existsSync(root)) {
      mkdirSync(root, { recursive: true, mode: 0o700 });
      markOwned(root);
    }
    return tracked(mkdtempSync(join(root, prefix)));
  }
  sweepOnce();
  const path = mkdtempSync(join(tmpdir(), prefix));
  markOwned(path);
  return tracked(path);
}

/**
 * Like `privateTempDir`, but the folder is only named, not made: whoever uses it makes it (a worker thread's
 * `usePrivateTempRoot`), so a process killed by a signal, which runs no cleanup, leaves nothing when no copy was made
 * (found in CI: every HTTP server the benchmarks kill left one empty folder per bag worker).
 */
export function reservedTempDir(prefix: string): PrivateTempDir {
  sweepOnce();
  return tracked(join(tmpdir(), `${prefix}${randomUUID().slice(0, 8)}`));
}

/** The file in each of our folders that names the process it belongs to: `<hostname> <pid>`. */
export const OWNER_FILE = '.vlink-owner';

function markOwned(path: string): void {
  writeFileSync(join(path, OWNER_FILE), `${hostname()} ${process.pid}\n`);
}

let swept = false;
function sweepOnce(): void {
  if (swept) return;
  swept = true;
  try {
    sweepAbandonedTempDirs();
  } catch {
    // a temporary directory that cannot be listed: nothing to sweep, and nothing to tell the reader
  }
}

/**
 * Removes the folders under `dir` that a process of this host made and that outlived it: a crash or `kill -9` runs
 * no cleanup, and the copies in them are as large as the bags they were made from (a server killed while reading a
 * damaged 2 GiB bag left 2 GiB in the temporary directory for good). Run once per process, before its first folder.
 * A folder is removed only when its owner file names this host and a process that no longer exists; one of a
 * process that cannot be asked (another user's: EPERM) or of another host (a temporary directory shared between
 * containers) is left alone. Returns the folders removed.
 */
export function sweepAbandonedTempDirs(dir: string = tmpdir()): string[] {
  const removed: string[] = [];
  const host = hostname();
  for (const name of readdirSync(dir)) {
    if (!name.startsWith('vlink-')) continue;
    const path = join(dir, name);
    let owner: string;
    try {
      owner = readFileSync(join(path, OWNER_FILE), 'utf8');
    } catch {
      continue; // not one of ours, or not a folder
    }
    const [ownerHost, ownerPid] = owner.trim().split(' ');
    const pid = Number(ownerPid);
    if (ownerHost !== host || !Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid || isAlive(pid)) continue;
    removeQuietly(path);
    removed.push(path);
  }
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code !== 'ESRCH';
  }
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
