import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { EXPORT_STATE_DIR } from './paths.js';

/** Who holds an export folder: written into its lock file. */
export interface LockHolder {
  pid: number;
  host: string;
  /** When that export started (ISO 8601). */
  started: string;
}

/** The lock file of an export folder (in its `_export` bookkeeping folder, which engines skip). */
export const LOCK_FILE = 'lock.json';

/**
 * The exclusive right of one export at a time to write into a folder: two exports into one folder would both export a
 * bag that neither had finished (duplicated rows) and delete each other's staged parts. Taken by creating the lock file
 * exclusively (`wx`: one process wins, also over NFS v3+), released by deleting it.
 */
export class ExportLock {
  private constructor(
    private readonly file: string,
    private readonly text: string,
    /** The holder of a lock that was taken over: its export had ended without releasing it. */
    readonly tookOver: LockHolder | undefined,
  ) {}

  /**
   * Locks `outDir` (absolute), or throws a BagError `BUSY` naming the export that holds it. A lock left by an export
   * that no longer runs (its pid is gone, on this host) is taken over: {@link tookOver} says whose it was. One on
   * another host cannot be checked from here, so it holds until deleted by hand.
   */
  static acquire(outDir: string): ExportLock {
    const dir = join(outDir, EXPORT_STATE_DIR);
    const file = join(dir, LOCK_FILE);
    const me: LockHolder = { pid: process.pid, host: hostname(), started: new Date().toISOString() };
    const text = `${JSON.stringify(me)}\n`;
    try {
      mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot create the export folder', { file: dir });
    }
    let tookOver: LockHolder | undefined;
    // Twice at most: once more after taking over a stale lock (another run may win that race: then it holds it).
    for (let attempt = 0; attempt < 2; attempt++) {
      if (create(file, text)) return new ExportLock(file, text, tookOver);
      const { holder, raw } = readHolder(file);
      if (raw === undefined) continue; // released meanwhile
      if (holder === undefined || !isStale(holder)) throw busy(file, holder);
      if (!removeIfUnchanged(file, raw)) throw busy(file, readHolder(file).holder);
      tookOver = holder;
    }
    throw busy(file, readHolder(file).holder);
  }

  /** Deletes the lock file, if it is still this run's. */
  release(): void {
    try {
      if (readFileSync(this.file, 'utf8') === this.text) rmSync(this.file, { force: true });
    } catch {
      // gone already
    }
  }
}

/** Creates the lock file with `text`; false when it exists. */
function create(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw BagError.wrap(error, 'IO_ERROR', 'cannot create the export lock', { file });
  }
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

function readHolder(file: string): { holder: LockHolder | undefined; raw: string | undefined } {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch {
    return { holder: undefined, raw: undefined };
  }
  try {
    const value = JSON.parse(raw) as Partial<LockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.started === 'string')
      return { holder: { pid: value.pid, host: value.host, started: value.started }, raw };
  } catch {
    // being written (created, not yet filled) or damaged: held by someone unknown
  }
  return { holder: undefined, raw };
}

/** True when the holder's process is gone: only knowable for a process of this host. */
function isStale(holder: LockHolder): boolean {
  if (holder.host !== hostname() || holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: it runs, as another user
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Deletes the stale lock file only if it is still the one read (`raw`): moved aside atomically first, so of two runs
 * taking over the same stale lock one moves it and the other finds it gone, and a fresh lock moved by mistake is put
 * back (a hard link never overwrites).
 */
function removeIfUnchanged(file: string, raw: string): boolean {
  const aside = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.stale`;
  try {
    renameSync(file, aside);
  } catch {
    return true; // gone already: try to create it again
  }
  let moved: string | undefined;
  try {
    moved = readFileSync(aside, 'utf8');
  } catch {
    moved = undefined;
  }
  if (moved !== raw) {
    try {
      linkSync(aside, file);
    } catch {
      // another run holds it now
    }
    rmSync(aside, { force: true });
    return false;
  }
  rmSync(aside, { force: true });
  return true;
}

function busy(file: string, holder: LockHolder | undefined): BagError {
  const who = holder
    ? `another export (pid ${holder.pid} on ${holder.host}, started ${holder.started})`
    : 'another export';
  return new BagError(
    'BUSY',
    `${who} is writing into this folder; wait for it to end, or delete the lock if it no longer runs`,
    { file },
  );
}
