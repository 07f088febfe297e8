import { closeSync, copyFileSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { freeBytes } from './compression.js';
import { CopiedStorage } from './copied-storage.js';
import type { Ros2Storage } from './storage.js';

/**
 * Opens a sqlite3 storage file where it is, or else, when it is in WAL mode, from a copy. rosbag2 writes its storages
 * in WAL mode, and SQLite opens a WAL database, even read-only, only where it can create the `-shm` and `-wal` files
 * beside it: a bag on a read-only mount or in a folder the reader may not write fails in place. The copy goes to the
 * temporary directory (refused when it would not fit there) and is removed when the storage closes. rosbags opens such
 * files `immutable`, which the SQLite libraries of Bun and better-sqlite3 cannot.
 */
export function openInPlaceOrCopy(file: string, open: (file: string) => Ros2Storage): Ros2Storage {
  try {
    return open(file);
  } catch (error) {
    if (!isWalDatabase(file)) throw error;
    const copy = StorageCopy.of(file);
    try {
      return new CopiedStorage(open(copy.path), file, copy);
    } catch {
      copy.remove();
      throw error; // the copy fails too: what failed in place names the bag's own file
    }
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
    private readonly folder: string,
  ) {}

  static of(file: string): StorageCopy {
    const size = statSync(file).size + (isFile(`${file}-wal`) ? statSync(`${file}-wal`).size : 0);
    if (freeBytes(tmpdir()) < size + MIN_FREE_AFTER)
      throw new BagError('LIMIT_REACHED', `no room for a copy of this WAL-mode storage in ${tmpdir()}`, { file });
    const folder = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-'));
    const path = join(folder, basename(file));
    try {
      copyFileSync(file, path);
      // Transactions not yet checkpointed into the file are in its -wal: they belong to the bag as well.
      if (isFile(`${file}-wal`)) copyFileSync(`${file}-wal`, `${path}-wal`);
    } catch (error) {
      rmSync(folder, { recursive: true, force: true });
      throw BagError.wrap(error, 'IO_ERROR', 'cannot copy this WAL-mode storage to the temporary directory', { file });
    }
    return new StorageCopy(path, folder);
  }

  remove(): void {
    rmSync(this.folder, { recursive: true, force: true });
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
