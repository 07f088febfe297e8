import { guardFile, guardSidecars, type GuardedRole, type ReaderOptions } from '@vlink/bag-core';

/** Files SQLite opens by itself next to a database: the rollback journal, the WAL and its index. */
export const SQLITE_SIDECARS = ['-journal', '-wal', '-shm'] as const;

/**
 * Before SQLite opens a database (a `.vdb`, a rosbag2 `.db3`): the file and any sidecar SQLite would open with it must
 * be regular files (SQLite blocks on a FIFO named `x.vdb-journal` as it does on `x.vdb`), and all of them inside
 * `confineTo` when set.
 */
export async function guardSqliteFiles(path: string, options: ReaderOptions, role: GuardedRole): Promise<void> {
  await guardFile(path, { confineTo: options.confineTo, role });
  await guardSidecars(path, SQLITE_SIDECARS, options.confineTo);
}
