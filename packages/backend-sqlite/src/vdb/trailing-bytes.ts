import type { SqliteConnection } from '../driver/driver.js';

/**
 * Bytes of the file past the database's last page (`page_count` × `page_size`, what SQLite reads): 0 for a `.vdb`
 * as SQLite leaves it, and never more while a recording is in WAL mode (its newest pages are in the `-wal` file).
 * SQLite ignores such bytes, so a file with another appended (`cat a.vdb b.vdb > c.vdb`) read as the first alone:
 * found by hand, 500 of 1,000 frames read and `check` passed.
 */
export function trailingBytes(db: SqliteConnection, fileSize: number): number {
  let pages: number;
  let pageSize: number;
  try {
    pages = Number(db.prepare('PRAGMA page_count;').get()?.['page_count'] ?? 0);
    pageSize = Number(db.prepare('PRAGMA page_size;').get()?.['page_size'] ?? 0);
  } catch {
    // A file whose pages SQLite cannot count is damaged in another way, which the reads that follow name.
    return 0;
  }
  if (!(pages > 0 && pageSize > 0)) return 0;
  return Math.max(0, fileSize - pages * pageSize);
}

/** The words `check` and a strict open use for them. */
export function trailingBytesProblem(bytes: number): string {
  return `${bytes} bytes follow the database's last page, which SQLite does not read (another file appended to it?)`;
}
