import { closeSync, openSync, statSync, truncateSync, writeSync } from 'node:fs';
import type { SqlRow, SqliteConnection, SqliteStatement, SqlValue } from '../driver/driver.js';
import type { WalkedTable } from './salvage-rows.js';
import { readSqliteHeader, type SqliteHeader } from './sqlite-header.js';

// A file cut short, as a salvage reads it: padded to the size its header says, twice (zeros, 0xff), so that a row of
// the page the cut went through is kept only where the missing bytes do not change it.

/**
 * A cut file: SQLite refuses every query when the file is shorter than the page count in its header says, so the
 * private copy is extended with `fill` bytes to that size. The pages that are there read as before; the missing ones
 * read as `fill`, which SQLite reports as damage where a b-tree reaches them (and the row walk steps past). The page
 * the cut went through keeps its surviving bytes: its cells that lie wholly before the cut are intact rows, and the
 * salvage tells them from the others by reading the file padded twice (see `CutPageCheck`). Returns the bytes added.
 */
export function padToHeaderSize(path: string, fill = 0): number {
  const missing = bytesShort(path);
  if (missing === 0) return 0;
  const size = statSync(path).size;
  const target = size + missing;
  if (fill === 0) truncateSync(path, target);
  else {
    const block = new Uint8Array(Math.min(target - size, 1024 * 1024)).fill(fill);
    const out = openSync(path, 'r+');
    try {
      for (let at = size; at < target; at += block.length)
        writeSync(out, block, 0, Math.min(block.length, target - at), at);
    } finally {
      closeSync(out);
    }
  }
  return target - size;
}

/** The bytes a file lacks of the size its header says (0: none, or no SQLite header to tell). */
export function bytesShort(path: string, header: SqliteHeader | undefined = readSqliteHeader(path)): number {
  if (!header?.pageSize || header.pageCount === 0) return 0;
  const { pageSize, pageCount } = header;
  const size = statSync(path).size;
  const target = Math.max(pageSize * pageCount, Math.ceil(size / pageSize) * pageSize);
  return target <= size || target > size + 1024 * 1024 * 1024 ? 0 : target - size;
}

/**
 * For a cut file, whether a row read from the copy padded with zeros reads the same from a twin padded with 0xff: a
 * row that differs (or that the twin cannot read) holds bytes the cut took, which the padding made up. Without it a
 * cell of the cut page would be copied with zeros where its payload was.
 */
export class CutPageCheck {
  private constructor(private readonly select: SqliteStatement) {}

  /** The check, or undefined when the twin cannot even prepare the query (the cut reached the schema). */
  static open(twin: SqliteConnection, table: WalkedTable): CutPageCheck | undefined {
    try {
      return new CutPageCheck(twin.prepare(`${table.select} WHERE rowid = ?;`));
    } catch {
      return undefined;
    }
  }

  /** True when `row` (with its rowid) reads the same, whatever the missing bytes are. */
  intact(row: SqlRow): boolean {
    let other: SqlRow | undefined;
    try {
      other = this.select.get(row['rowid'] as SqlValue);
    } catch {
      return false;
    }
    if (!other) return false;
    for (const column of Object.keys(row)) if (!sameValue(row[column], other[column])) return false;
    return true;
  }
}

function sameValue(a: SqlValue | undefined, b: SqlValue | undefined): boolean {
  if (a instanceof Uint8Array && b instanceof Uint8Array)
    return a.length === b.length && a.every((byte, i) => byte === b[i]);
  return a === b;
}
