import {
  closeSync,
  copyFileSync,
  existsSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import type { ProgressCallback } from '@vlink/bag-core';
import type { SqlRow, SqliteConnection, SqliteDriver, SqliteStatement, SqlValue } from '../driver/driver.js';
import { needsRecovery, recoverInterrupted } from './recover.js';
import * as SQL from './sql.js';

// How a salvage reaches rows past damage: a cut file is padded so SQLite opens it at all, and the row walk steps over
// damaged pages by rowid. Apart from what decides what to keep of each row: salvage.ts for a .vdb, salvage-tables.ts
// for the tables of any SQLite file (a rosbag2 sqlite3 storage).

/** The table a row walk goes through, and the query of its rows: `select` names the rowid `rowid`, has no WHERE. */
export interface WalkedTable {
  name: string;
  select: string;
}

/** A .vdb's frames, as its salvage reads them. */
export const VDB_FRAMES: WalkedTable = { name: 'VLinkDatas', select: SQL.SALVAGE_FRAMES };

/**
 * The private copies a salvage reads `source` from, beside `target`, so that `source` is never written: `work` (with
 * its journal or WAL), and for a cut file `twin`, the same padded with 0xff instead of zeros (`CutPageCheck`). An
 * unfinished transaction is rolled back in each. `remove()` deletes them all, with the `-shm` SQLite may create.
 */
export class WorkCopies {
  readonly work: string;
  /** Bytes added to the cut file (0: it was whole); `twin` exists only then. */
  readonly padded: number = 0;
  readonly twin: string | undefined;
  private readonly made: string[] = [];

  constructor(driver: SqliteDriver, source: string, target: string, problem: (line: string) => void) {
    this.work = `${target}.source`;
    try {
      this.copy(source, this.work);
      this.padded = padToHeaderSize(this.work);
      if (this.padded > 0) {
        problem(`the file is ${this.padded} bytes shorter than its header says (cut short): the rest reads as zeros`);
        // The same file padded with 0xff instead: a row that reads alike from both does not hold a missing byte.
        this.twin = `${target}.twin`;
        this.copy(source, this.twin);
        padToHeaderSize(this.twin, 0xff);
      }
      for (const path of this.twin ? [this.work, this.twin] : [this.work]) {
        if (!needsRecovery(path)) continue;
        try {
          recoverInterrupted(driver, path);
        } catch (error) {
          if (path === this.work)
            problem(`the unfinished transaction could not be rolled back: ${(error as Error).message}`);
        }
      }
    } catch (error) {
      this.remove();
      throw error;
    }
  }

  remove(): void {
    for (const path of this.made) rmSync(path, { force: true });
    for (const path of this.twin ? [this.work, this.twin] : [this.work]) rmSync(`${path}-shm`, { force: true });
  }

  private copy(source: string, to: string): void {
    for (const suffix of ['', '-journal', '-wal']) {
      if (!existsSync(source + suffix)) continue;
      this.made.push(to + suffix);
      copyFileSync(source + suffix, to + suffix);
    }
  }
}

/** The most rows a probe skips at once looking for readable rows after damaged pages. */
const MAX_SKIP = 1 << 24;

/**
 * A cut file: SQLite refuses every query when the file is shorter than the page count in its header says, so the
 * private copy is extended with `fill` bytes to that size. The pages that are there read as before; the missing ones
 * read as `fill`, which SQLite reports as damage where a b-tree reaches them (and the row walk steps past). The page
 * the cut went through keeps its surviving bytes: its cells that lie wholly before the cut are intact rows, and the
 * salvage tells them from the others by reading the file padded twice (see `CutPageCheck`). Returns the bytes added.
 */
export function padToHeaderSize(path: string, fill = 0): number {
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
  const target = Math.max(want, Math.ceil(size / pageSize) * pageSize);
  if (target <= size || target > size + 1024 * 1024 * 1024) return 0;
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

/**
 * For a cut file, whether a row read from the copy padded with zeros reads the same from a twin padded with 0xff: a
 * row that differs (or that the twin cannot read) holds bytes the cut took, which the padding made up. Without it a
 * cell of the cut page would be copied with zeros where its payload was.
 */
export class CutPageCheck {
  private constructor(private readonly select: SqliteStatement) {}

  /** The check, or undefined when the twin cannot even prepare the query (the cut reached the schema). */
  static open(twin: SqliteConnection, table: WalkedTable = VDB_FRAMES): CutPageCheck | undefined {
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

/**
 * Every row SQLite can reach, in rowid order. When a step fails (a damaged page), the walk seeks the rows after it one
 * by one, else probes forward by growing rowid steps for the next row it can read and goes on from there. `keep`
 * returns false for a row that is none the writer wrote (a damaged cell), which does not move the walk on. Returns
 * how many rowids were jumped over.
 */
export function copyRows(
  db: SqliteConnection,
  table: WalkedTable,
  keep: (row: SqlRow) => boolean,
  problem: (line: string) => void,
  onProgress: ProgressCallback | undefined,
): number {
  // Progress by rowid against the largest one (the writer's rowids are dense; skipped damage still moves it on).
  let total = 0;
  if (onProgress) {
    try {
      total = Number(db.prepare(`SELECT MAX(rowid) AS n FROM ${table.name};`).get()?.['n'] ?? 0);
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
    return copyRowsFrom(db, table, keep, problem, onProgress ? report : undefined);
  } finally {
    onProgress?.({ done: total, total, unit: 'rows' });
  }
}

function copyRowsFrom(
  db: SqliteConnection,
  table: WalkedTable,
  keep: (row: SqlRow) => boolean,
  problem: (line: string) => void,
  report: ((rowid: number) => void) | undefined,
): number {
  const select = `${table.select} WHERE rowid > ? ORDER BY rowid;`;
  const seekSql = `${table.select} WHERE rowid = ?;`;
  const probe = `SELECT rowid FROM ${table.name} WHERE rowid > ? ORDER BY rowid LIMIT 1;`;
  let last = 0;
  let skipped = 0;
  let disordered = 0;
  // Rowids whose row `keep` refused as none the writer wrote: a damaged page's cell can carry any rowid, and taking
  // its rowid as the walk's position skipped every row between (fuzz .vdb seed 112 #6581: a cell of rowid 1,463 in a
  // file of 160 rows, and the repair kept 80). Remembered so that no walk hands one to `keep` twice.
  const refused = new Set<number>();
  for (let attempts = 0; attempts < 10_000; attempts++) {
    let progressed = false;
    try {
      for (const row of db.prepare(select).iterate(last as SqlValue)) {
        const rowid = Number(row['rowid']);
        // A damaged b-tree page can hand out a cell whose key is not above the last one (zeroed bytes read as rowid
        // 0): such a row is no row of the walk, and keeping it would copy rows twice and send the walk back to the
        // start (found by fuzzing: one zeroed stretch made the salvage loop 10,000 times).
        if (!(rowid > last)) {
          disordered++;
          continue;
        }
        if (refused.has(rowid)) continue;
        if (!keep(row)) {
          refused.add(rowid);
          continue;
        }
        last = rowid;
        progressed = true;
        if (report && (last & 1023) === 0) report(last);
      }
      noteDisordered(table, disordered, problem);
      return skipped;
    } catch (error) {
      // The rows after `last` may still be found by their rowid (a seek) where the scan through a damaged page is
      // not: a reader that goes by the elapsed index reads them (found by fuzzing, .vdb seed 105 #8422: a page's cell
      // count made 1,280 of 39, and the walk lost a row the reader read). The writer's rowids follow each other.
      const sought = seekRows(db, seekSql, last, keep, refused);
      if (sought > 0) {
        problem(`${table.name} after row ${last}: ${(error as Error).message}; ${sought} rows read one by one past it`);
        last += sought;
        if (report) report(last);
        continue;
      }
      // No row since the last resume: the row right after `last` is the unreadable one; look past it. Every attempt
      // thus moves on by at least one rowid.
      const from = progressed ? last : last + 1;
      let next: number | undefined;
      for (let step = 1; step <= MAX_SKIP && next === undefined; step *= 2) {
        try {
          const found = db.prepare(probe).get((from + step) as SqlValue);
          if (found === undefined) break;
          const rowid = Number(found['rowid']);
          // A damaged page can answer with a cell whose key is not past the probe (rowid 0 from zeroed bytes): taken
          // as the place to resume, it sent the walk back to the start, to copy every row again on each of its
          // 10,000 attempts (fuzz .vdb seed 1205 #2774: 540,000 frames repaired out of a file of 160). Such an
          // answer is more damage; the walk only ever moves forward.
          if (rowid > from + step) next = rowid;
        } catch {
          // still inside the damage
        }
      }
      problem(
        `${table.name} after row ${from}: ${(error as Error).message}${next === undefined ? '; nothing readable after it' : `; rows resume at ${next}`}`,
      );
      if (next === undefined) break;
      skipped += next - last - 1;
      last = next - 1;
    }
  }
  noteDisordered(table, disordered, problem);
  return skipped;
}

/** The most rows taken one by one past a damaged stretch before the scan is tried again. */
const MAX_SOUGHT = 4096;

/**
 * Hands `keep` the rows `last + 1`, `last + 2`, … read one seek each (but those it refused before), up to the first
 * that cannot be read; returns how many rowids it went past.
 */
function seekRows(
  db: SqliteConnection,
  sql: string,
  last: number,
  keep: (row: SqlRow) => boolean,
  refused: Set<number>,
): number {
  let seek: SqliteStatement;
  try {
    seek = db.prepare(sql);
  } catch {
    return 0;
  }
  let n = 0;
  for (; n < MAX_SOUGHT; n++) {
    let row: SqlRow | undefined;
    try {
      row = seek.get((last + n + 1) as SqlValue);
    } catch {
      break;
    }
    const rowid = last + n + 1;
    if (row === undefined || Number(row['rowid']) !== rowid) break;
    if (!refused.has(rowid) && !keep(row)) refused.add(rowid);
  }
  return n;
}

function noteDisordered(table: WalkedTable, count: number, problem: (line: string) => void): void {
  if (count > 0) problem(`${table.name}: ${count} cells out of rowid order (damaged pages) left out`);
}
