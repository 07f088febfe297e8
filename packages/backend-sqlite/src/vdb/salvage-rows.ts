import { closeSync, openSync, readSync, statSync, truncateSync } from 'node:fs';
import type { ProgressCallback } from '@vlink/bag-core';
import type { SqlRow, SqliteConnection, SqlValue } from '../driver/driver.js';
import * as SQL from './sql.js';

// How the salvage of a .vdb reaches rows past damage: a cut file is padded so SQLite opens it at all, and the row
// walk steps over damaged pages by rowid. Apart from salvage.ts, which decides what to keep of each row.

/** The most rows a probe skips at once looking for readable rows after damaged pages. */
const MAX_SKIP = 1 << 24;

/**
 * A cut file: SQLite refuses every query when the file is shorter than the page count in its header says, so the
 * private copy is extended with zeros to that size. The pages that are there read as before; the missing ones are
 * empty pages, which SQLite reports as damage where a b-tree reaches them (and the row walk steps past). Returns the
 * bytes added.
 */
export function padToHeaderSize(path: string): number {
  const head = new Uint8Array(100);
  const fd = openSync(path, 'r');
  let n: number;
  try {
    n = readSync(fd, head, 0, 100, 0);
  } finally {
    closeSync(fd);
  }
  if (n < 100) return 0;
  const view = new DataView(head.buffer);
  const rawPageSize = view.getUint16(16, false);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pages = view.getUint32(28, false);
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0 || pages === 0) return 0;
  const want = pageSize * pages;
  const size = statSync(path).size;
  const whole = Math.floor(size / pageSize) * pageSize;
  const target = Math.max(want, Math.ceil(size / pageSize) * pageSize);
  if (target <= size || target > size + 1024 * 1024 * 1024) return 0;
  // The page the cut went through is zeroed whole, not only its missing part: its surviving cells could otherwise read
  // as rows whose payloads end in zeros. A zeroed page is no b-tree page at all, which SQLite reports as damage.
  truncateSync(path, whole);
  truncateSync(path, target);
  return target - size;
}

/**
 * Every row SQLite can reach, in rowid order. When a step fails (a damaged page), the walk probes forward by
 * growing rowid steps for the next row it can read and goes on from there. Returns how many rowids were jumped over.
 */
export function copyRows(
  db: SqliteConnection,
  keep: (row: SqlRow) => void,
  problem: (line: string) => void,
  onProgress: ProgressCallback | undefined,
): number {
  // Progress by rowid against the largest one (the writer's rowids are dense; skipped damage still moves it on).
  let total = 0;
  if (onProgress) {
    try {
      total = Number(db.prepare('SELECT MAX(rowid) AS n FROM VLinkDatas;').get()?.['n'] ?? 0);
    } catch {
      // a damaged table: no steps, only the end
    }
  }
  let reported = 0;
  const report = (rowid: number) => {
    const done = Math.min(rowid, total);
    if (done > reported) onProgress?.({ done: (reported = done), total, unit: 'rows' });
  };
  try {
    return copyRowsFrom(db, keep, problem, onProgress ? report : undefined);
  } finally {
    onProgress?.({ done: total, total, unit: 'rows' });
  }
}

function copyRowsFrom(
  db: SqliteConnection,
  keep: (row: SqlRow) => void,
  problem: (line: string) => void,
  report: ((rowid: number) => void) | undefined,
): number {
  const select = `${SQL.SELECT_FRAMES.replace('SELECT ', 'SELECT rowid, ')} WHERE rowid > ? ORDER BY rowid;`;
  const probe = 'SELECT rowid FROM VLinkDatas WHERE rowid > ? ORDER BY rowid LIMIT 1;';
  let last = 0;
  let skipped = 0;
  for (let attempts = 0; attempts < 10_000; attempts++) {
    let progressed = false;
    try {
      for (const row of db.prepare(select).iterate(last as SqlValue)) {
        keep(row);
        last = Number(row['rowid']);
        progressed = true;
        if (report && (last & 1023) === 0) report(last);
      }
      return skipped;
    } catch (error) {
      // No row since the last resume: the row right after `last` is the unreadable one; look past it. Every attempt
      // thus moves on by at least one rowid.
      const from = progressed ? last : last + 1;
      let next: number | undefined;
      for (let step = 1; step <= MAX_SKIP && next === undefined; step *= 2) {
        try {
          const found = db.prepare(probe).get((from + step) as SqlValue);
          if (found === undefined) break;
          next = Number(found['rowid']);
        } catch {
          // still inside the damage
        }
      }
      problem(
        `VLinkDatas after row ${from}: ${(error as Error).message}${next === undefined ? '; nothing readable after it' : `; rows resume at ${next}`}`,
      );
      if (next === undefined) return skipped;
      skipped += next - last - 1;
      last = next - 1;
    }
  }
  return skipped;
}
