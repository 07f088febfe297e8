import { closeSync, existsSync, openSync, readSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';
import type { SqliteConnection, SqliteDriver } from '../driver/driver.js';
import { sqliteError } from './sqlite-errors.js';

/**
 * A writer that died mid-transaction leaves a hot rollback journal (`-journal`) or, in WAL mode, a `-wal` file next to
 * the database. SQLite repairs both on the next read-write open (rolls the unfinished transaction back / replays the
 * committed WAL frames), but a read-only connection cannot: it fails with SQLITE_READONLY_ROLLBACK, or cannot build
 * the WAL index. This is the read-write open that does the repair, run by `tryToFix` before the read-only open.
 *
 * Note: the writer asks for `journal_mode = OFF` as VLink does, but all three drivers keep the journal on
 * (better-sqlite3 opens in SQLite's defensive mode, which forbids OFF; bun:sqlite and Deno's node:sqlite refuse it
 * too), so files are in fact written with a rollback journal, which is what makes a kill -9 of the writer lose at most
 * the transaction in flight.
 */
export function needsRecovery(path: string): boolean {
  return isHotJournal(`${path}-journal`) || existsSync(`${path}-wal`);
}

export function recoverInterrupted(driver: SqliteDriver, path: string): void {
  let db: SqliteConnection;
  try {
    db = driver.open(path, { readOnly: false });
  } catch (error) {
    throw sqliteError(
      error,
      'IO_ERROR',
      'cannot open the .vdb read-write to roll back its unfinished transaction',
      path,
    );
  }
  try {
    db.exec('PRAGMA busy_timeout = 100;');
    // The first read takes the shared lock, which is where SQLite rolls a hot journal back or recovers the WAL.
    db.prepare('SELECT COUNT(*) AS n FROM sqlite_master;').get();
    const mode = db.prepare('PRAGMA journal_mode;').get()?.['journal_mode'];
    // Leave a file read-only readers can open without creating `-shm` (as the writer's clean close does).
    if (mode === 'wal') db.exec('PRAGMA journal_mode = DELETE;');
  } catch (error) {
    throw sqliteError(error, 'IO_ERROR', 'cannot roll back the unfinished transaction of the .vdb', path);
  } finally {
    db.close();
  }
}

/** The message for a read-only open that failed on a hot journal (SQLITE_READONLY_ROLLBACK and friends). */
export function hotJournalError(error: unknown, path: string): BagError | undefined {
  const e = error as { errcode?: number; code?: string; message?: string } | undefined;
  const text = `${e?.code ?? ''} ${e?.message ?? ''}`;
  if (
    !(e?.errcode === 776 || /READONLY_ROLLBACK|READONLY_RECOVERY|readonly database/i.test(text)) ||
    !needsRecovery(path)
  )
    return undefined;
  return new BagError(
    'CORRUPT_FILE',
    'the .vdb has an unfinished transaction (its writer did not close it); open it with tryToFix: true or readOnly: false to roll it back',
    { file: path, cause: error },
  );
}

/** The rollback journal header magic; in EXCLUSIVE locking mode a finished transaction only zeroes it. */
const JOURNAL_MAGIC = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

function isHotJournal(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = new Uint8Array(8);
    return readSync(fd, head, 0, 8, 0) === 8 && JOURNAL_MAGIC.every((b, i) => head[i] === b);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
