import { closeSync, copyFileSync, existsSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { type PrivateTempDir, privateTempDir } from '@vlink/bag-core/internal';
import { freeBytes } from './compression.js';
import { CopiedStorage } from './copied-storage.js';
import type { Ros2Storage } from './storage.js';

/**
 * Opens a sqlite3 storage file so that the user's folder stays as it was: same files, same bytes. rosbag2 writes its
 * storages in WAL mode, and SQLite opens a WAL database, even read-only, only by creating `-shm` (and `-wal`) files
 * beside it, which a read-only connection leaves behind (and which it cannot create on a read-only mount). So a WAL
 * storage whose `-wal` holds nothing (a closed recording) is opened immutable where it is, where the driver can
 * (node:sqlite, bun:sqlite), as rosbags opens them. Where it cannot (better-sqlite3, Node 20) and nothing lies beside
 * the file, it is read in place and the `-shm`/`-wal` SQLite creates are removed at close: copying it instead would
 * cost the storage's size in time and temporary space on every read. One whose `-wal` holds transactions not yet in
 * the file (a recording that crashed), or whose `-shm` is already there (a reader may rewrite it), is read from a
 * copy of both in the temporary directory, removed at close; so is one that cannot be opened in place (a read-only
 * mount). Only where no copy can be made (no room) is it opened in place as SQLite does it, leaving its `-shm` there.
 * A storage in rollback mode opens read-only in place: reading it creates nothing.
 */
export function openLeavingFolderAsIs(
  file: string,
  open: (file: string, immutable: boolean) => Ros2Storage,
): Ros2Storage {
  if (!isWalDatabase(file)) return open(file, false);
  if (!walHoldsData(file)) {
    try {
      return open(file, true);
    } catch {
      // this driver cannot open a file immutable: in place, undoing what SQLite creates, or the copy below
    }
    const beside = SIDECARS.filter((suffix) => existsSync(`${file}${suffix}`));
    if (beside.length === 0) {
      try {
        return new CopiedStorage(open(file, false), file, { remove: () => removeCreatedSidecars(file) });
      } catch {
        removeCreatedSidecars(file); // e.g. a read-only mount: the copy below
      }
    }
  }
  let copy: StorageCopy;
  try {
    copy = StorageCopy.of(file);
  } catch (copyError) {
    try {
      return open(file, false);
    } catch {
      throw copyError;
    }
  }
  try {
    return new CopiedStorage(open(copy.path, false), file, copy);
  } catch {
    copy.remove();
    return open(file, false); // the copy fails too: what fails in place names the bag's own file
  }
}

const SIDECARS = ['-shm', '-wal'] as const;

/**
 * Removes the `-shm` and the empty `-wal` that SQLite created beside a storage read in place (none was there before:
 * see openLeavingFolderAsIs). A `-wal` that holds anything is never removed: it would be data.
 */
function removeCreatedSidecars(file: string): void {
  for (const suffix of SIDECARS) {
    const path = `${file}${suffix}`;
    try {
      if (suffix === '-shm' || statSync(path).size === 0) rmSync(path, { force: true });
    } catch {
      // not created, or already gone
    }
  }
}

/** Whether a `-wal` file beside the storage holds anything (SQLite removes it, or leaves it empty, after a checkpoint). */
function walHoldsData(file: string): boolean {
  try {
    return statSync(`${file}-wal`).size > 0;
  } catch {
    return false;
  }
}

/** The SQLite header says WAL: "SQLite format 3\0", then file format versions 2 (write) and 2 (read) at 18 and 19. */
export function isWalDatabase(file: string): boolean {
  const header = new Uint8Array(20);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    if (readSync(fd, header, 0, 20, 0) < 20) return false;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  const magic = new TextDecoder().decode(header.subarray(0, 15));
  return magic === 'SQLite format 3' && header[18] === 2 && header[19] === 2;
}

/** A copy of a storage file in a folder of its own under the temporary directory. */
class StorageCopy {
  private constructor(
    readonly path: string,
    private readonly folder: PrivateTempDir,
  ) {}

  static of(file: string): StorageCopy {
    const size = statSync(file).size + (isFile(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    if (freeBytes(tmpdir()) < size + MIN_FREE_AFTER)
      throw new BagError('LIMIT_REACHED', `no room for a copy of this WAL-mode storage in ${tmpdir()}`, { file });
    const folder = privateTempDir('vlink-rosbag2-');
    const path = join(folder.path, basename(file));
    try {
      copyFileSync(file, path);
      // Transactions not yet checkpointed into the file are in its -wal: they belong to the bag as well.
      if (isFile(`${file}-wal`)) copyFileSync(`${file}-wal`, `${path}-wal`);
    } catch (error) {
      folder.remove();
      throw BagError.wrap(error, 'IO_ERROR', 'cannot copy this WAL-mode storage to the temporary directory', { file });
    }
    return new StorageCopy(path, folder);
  }

  remove(): void {
    this.folder.remove();
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Room the copy must leave on the temporary file system. */
const MIN_FREE_AFTER = 256 * 1024 * 1024;
