import { copyFileSync, existsSync, rmSync, statSync } from 'node:fs';
import type { ProgressCallback } from '@vlink/bag-core';
import type { SqlRow, SqliteConnection, SqliteDriver, SqliteStatement, SqlValue } from '../driver/driver.js';
import { type OrphanRows, type OrphanShape, scanOrphanRows } from './orphan-rows.js';
import { bytesShort, padToHeaderSize } from './cut-file.js';
import { needsRecovery, recoverInterrupted } from './recover.js';
import * as SQL from './sql.js';
import { readSqliteHeader } from './sqlite-header.js';

// How a salvage reaches rows past damage: a cut file is padded so SQLite opens it at all (cut-file.ts), the row walk
// steps over damaged pages by rowid, and the rows of leaf pages damage cut off from their b-tree fill the gaps it
// steps over (orphan-rows.ts). Apart from what decides what to keep of each row: salvage.ts for a .vdb,
// salvage-tables.ts for the tables of any SQLite file (a rosbag2 sqlite3 storage).

/** The table a row walk goes through, and the query of its rows: `select` names the rowid `rowid`, has no WHERE. */
export interface WalkedTable {
  name: string;
  select: string;
}

/** A .vdb's frames, as its salvage reads them. */
export const VDB_FRAMES: WalkedTable = { name: 'VLinkDatas', select: SQL.SALVAGE_FRAMES };

/** How the rows of `VLinkDatas` are recognised on pages its b-tree no longer reaches, as `SALVAGE_FRAMES` reads them. */
export const VDB_FRAMES_SHAPE: OrphanShape = {
  table: 'VLinkDatas',
  columns: [
    { name: 'elapsed', affinity: 'INTEGER' },
    { name: 'url', affinity: 'INTEGER' },
    { name: 'action', affinity: 'TEXT' },
    { name: 'data', affinity: 'BLOB', textAsBlob: true },
  ],
};

/** The cut-off rows of a salvage's tables (orphan-rows.ts), scanned when a walk first meets damage. */
export type OrphanSource = () => OrphanRows | undefined;

/**
 * The files a salvage reads `source` through, so that `source` is never written. A file that SQLite can read in place
 * as it is (whole, no journal or WAL to roll back, not in WAL mode) is read in place, read-only: `work` is `source`,
 * and the salvage needs no more room than its copy (a private copy of a damaged 2 GiB file took 2 GiB more). Else
 * private copies beside `target`: `work` (with its journal or WAL), and for a cut file `twin`, the same padded with
 * 0xff instead of zeros (`CutPageCheck`), an unfinished transaction rolled back in each. `remove()` deletes the
 * copies, with the `-shm` SQLite may create, and nothing of `source`.
 */
export class WorkCopies {
  readonly work: string;
  /** Bytes added to the cut file (0: it was whole); `twin` exists only then. */
  readonly padded: number = 0;
  readonly twin: string | undefined;
  private readonly made: string[] = [];
  /** The scan of pages no b-tree reaches, open until `remove()`. */
  private scanned: OrphanRows | undefined;

  constructor(driver: SqliteDriver, source: string, target: string, problem: (line: string) => void) {
    if (readsInPlace(source)) {
      this.work = source;
      return;
    }
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

  /**
   * The scan for rows of `shapes` on pages the b-trees no longer reach, made once, at its first call; its notes go
   * to `problem`. None while the work copy still has a journal or WAL it could not be rid of: its pages are then not
   * what SQLite reads.
   */
  orphanSource(db: SqliteConnection, shapes: readonly OrphanShape[], problem: (line: string) => void): OrphanSource {
    let tried = false;
    return () => {
      if (tried) return this.scanned;
      tried = true;
      if (needsRecovery(this.work)) {
        problem('pages its b-trees no longer reach not scanned: the unfinished transaction was not rolled back');
        return undefined;
      }
      try {
        const roots = db
          .prepare('SELECT rootpage FROM sqlite_master WHERE rootpage > 0;')
          .all()
          .map((row) => Number(row['rootpage']));
        this.scanned = scanOrphanRows(this.work, statSync(this.work).size - this.padded, roots, shapes);
        for (const note of this.scanned.notes) problem(note);
      } catch (error) {
        problem(`pages its b-trees no longer reach not scanned: ${(error as Error).message}`);
      }
      return this.scanned;
    };
  }

  remove(): void {
    this.scanned?.close();
    if (this.made.length === 0) return; // read in place: nothing of ours
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

/** Whether a read-only SQLite connection reads the file as it is, writing nothing beside it. */
function readsInPlace(path: string): boolean {
  const header = readSqliteHeader(path);
  return header !== undefined && !header.walMode && !needsRecovery(path) && bytesShort(path, header) === 0;
}

/** The most rows a probe skips at once looking for readable rows after damaged pages. */
const MAX_SKIP = 1 << 24;

/**
 * Every row SQLite can reach, in rowid order. When a step fails (a damaged page), the walk seeks the rows after it one
 * by one, else probes forward by growing rowid steps for the next row it can read and goes on from there; the rows
 * of the rowids it jumps over that `orphans` finds on pages the b-tree no longer reaches are handed in their place
 * (with `orphan` true: no cut check can find them by rowid). `keep` returns false for a row that is none the writer
 * wrote (a damaged cell), which does not move the walk on. Returns how many rowids were jumped over and not found.
 */
export function copyRows(
  db: SqliteConnection,
  table: WalkedTable,
  keep: (row: SqlRow, orphan?: boolean) => boolean,
  problem: (line: string) => void,
  onProgress: ProgressCallback | undefined,
  orphans?: OrphanSource,
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
    return copyRowsFrom(db, table, keep, problem, onProgress ? report : undefined, orphans);
  } finally {
    onProgress?.({ done: total, total, unit: 'rows' });
  }
}

function copyRowsFrom(
  db: SqliteConnection,
  table: WalkedTable,
  keep: (row: SqlRow, orphan?: boolean) => boolean,
  problem: (line: string) => void,
  report: ((rowid: number) => void) | undefined,
  orphans: OrphanSource | undefined,
): number {
  const select = `${table.select} WHERE rowid >= ? ORDER BY rowid;`; // from `last + 1`: see `nextReadable`
  const seekSql = `${table.select} WHERE rowid = ?;`;
  // Named: in a table with an INTEGER PRIMARY KEY (rosbag2's messages), a bare `rowid` comes back under that column's name.
  const probe = `SELECT rowid AS rowid FROM ${table.name} WHERE rowid >= ? ORDER BY rowid LIMIT 1;`;
  let last = 0;
  let skipped = 0;
  let disordered = 0;
  // Rowids whose row `keep` refused as none the writer wrote: a damaged page's cell can carry any rowid, and taking
  // its rowid as the walk's position skipped every row between (fuzz .vdb seed 112 #6581: a cell of rowid 1,463 in a
  // file of 160 rows, and the repair kept 80). Remembered so that no walk hands one to `keep` twice.
  const refused = new Set<number>();
  // Rows of the rowids after `last` and before `before` found on cut-off pages: handed to `keep` in order.
  let found = 0;
  let damaged = false;
  let scanned: OrphanRows | undefined;
  let sought = 0;
  // The rowids after `last` and before `before`: those of cut-off pages, and (`seek`: up to MAX_SOUGHT) those a
  // seek by rowid reads, which a scan led astray by a damaged child pointer passed by. Returns how many it read.
  const fillGap = (before: number, seek: boolean): number => {
    scanned ??= orphans?.();
    const cutOff = (scanned?.take(table.name, last, before) ?? [])[Symbol.iterator]();
    let pending = cutOff.next();
    const seekRow = seek ? db.prepare(seekSql) : undefined;
    const seekEnd = seek ? Math.min(before, last + 1 + MAX_SOUGHT) : 0;
    let read = 0;
    /** Hands on the cut-off rows up to `upTo`; true when the last of them was row `upTo`. */
    const takeCutOff = (upTo: number): boolean => {
      let at = false;
      for (; !pending.done && Number(pending.value['rowid']) <= upTo; pending = cutOff.next()) {
        at = Number(pending.value['rowid']) === upTo;
        if (keep(pending.value, true)) {
          read++;
          found++;
        }
      }
      return at;
    };
    for (let rowid = last + 1; rowid < seekEnd; rowid++) {
      if (takeCutOff(rowid) || refused.has(rowid)) continue;
      let row: SqlRow | undefined;
      try {
        row = seekRow!.get(rowid as SqlValue);
      } catch {
        continue; // a damaged page
      }
      if (row === undefined || Number(row['rowid']) !== rowid) continue;
      if (keep(row)) {
        read++;
        sought++;
      } else refused.add(rowid);
    }
    takeCutOff(Number.POSITIVE_INFINITY);
    return read;
  };
  const finish = () => {
    // A walk that met damage ends with the cut-off rows past its last one; those among rows it read are left out.
    if (damaged) fillGap(Number.POSITIVE_INFINITY, false);
    const among = scanned?.left(table.name) ?? 0;
    if (among > 0)
      problem(`${table.name}: ${among} rows on pages its b-tree no longer reaches lie among rows read: left out`);
    if (found > 0) problem(`${table.name}: ${found} rows read from pages its b-tree no longer reaches`);
    if (sought > 0) problem(`${table.name}: ${sought} rows the scan passed by read one by one`);
    noteDisordered(table, disordered, problem);
  };
  for (let attempts = 0; attempts < 10_000; attempts++) {
    let progressed = false;
    try {
      for (const row of db.prepare(select).iterate((last + 1) as SqlValue)) {
        const rowid = Number(row['rowid']);
        // A damaged b-tree page can hand out a cell whose key is not above the last one (zeroed bytes read as rowid
        // 0): such a row is no row of the walk, and keeping it would copy rows twice and send the walk back to the
        // start (found by fuzzing: one zeroed stretch made the salvage loop 10,000 times).
        if (!(rowid > last)) {
          disordered++;
          continue;
        }
        if (refused.has(rowid)) continue;
        // Rowids missing from a scan that met no error: a damaged child pointer can lead the scan past leaves (to
        // another one, read twice: the rows out of order above) without SQLite noticing. The rows of the leaf it no
        // longer reaches are on a cut-off page; those it passed by are found by rowid (divider keys lead there).
        if (rowid > last + 1) {
          damaged = true;
          fillGap(rowid, true);
          last = rowid - 1; // the gap is done with, whatever this row turns out to be
        }
        if (!keep(row)) {
          refused.add(rowid);
          continue;
        }
        last = rowid;
        progressed = true;
        if (report && (last & 1023) === 0) report(last);
      }
      finish();
      return skipped;
    } catch (error) {
      damaged = true;
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
      const next = nextReadable(db, probe, from);
      problem(
        `${table.name} after row ${from}: ${(error as Error).message}${next === undefined ? '; nothing readable after it' : `; rows resume at ${next}`}`,
      );
      if (next === undefined) break;
      skipped += next - last - 1 - fillGap(next, true);
      last = next - 1;
    }
  }
  finish();
  return skipped;
}

/**
 * The first rowid after `from` that the table's b-tree reads, past the damage right after `from`: probed at growing
 * steps, then narrowed down between the last step inside the damage and the first past it. Without the narrowing,
 * the rows between the damage's end and the probe that found them were lost (a zeroed leaf of 22 rows in a rosbag2
 * storage cost 32). Undefined: nothing readable after it.
 */
function nextReadable(db: SqliteConnection, probe: string, from: number): number | undefined {
  // The row after `at`, null when there is none, undefined while inside the damage. A damaged page can answer with a
  // cell whose key is not past the probe (rowid 0 from zeroed bytes): taken as the place to resume, it sent the walk
  // back to the start, to copy every row again on each of its 10,000 attempts (fuzz .vdb seed 1205 #2774: 540,000
  // frames repaired out of a file of 160). Such an answer is more damage; the walk only ever moves forward.
  const after = (at: number): number | null | undefined => {
    try {
      // `>= at + 1`, not `> at`: SQLite seeks the key it is given, and seeking the last key of a damaged leaf went into
      // that leaf (the row right after it was lost).
      const found = db.prepare(probe).get((at + 1) as SqlValue);
      if (found === undefined) return null;
      const rowid = Number(found['rowid']);
      return rowid > at ? rowid : undefined;
    } catch {
      return undefined;
    }
  };
  for (let step = 1; step <= MAX_SKIP; step *= 2) {
    let next = after(from + step);
    if (next === null) return undefined;
    if (next === undefined) continue;
    // The probe at half the step was inside the damage: the first readable row lies in between.
    let inside = from + step / 2;
    let outside = from + step;
    while (outside - inside > 1) {
      const middle = Math.floor((inside + outside) / 2);
      const found = after(middle);
      if (typeof found === 'number') {
        outside = middle;
        next = found;
      } else inside = middle;
    }
    return next;
  }
  return undefined;
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
  if (count > 0)
    problem(`${table.name}: ${count} cells out of rowid order left out (read twice, or cells of damaged pages)`);
}
