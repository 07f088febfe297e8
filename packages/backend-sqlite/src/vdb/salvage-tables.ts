import { rmSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';
import type { SqlRow, SqliteConnection, SqliteDriver, SqlValue } from '../driver/driver.js';
import type { OrphanColumn, OrphanShape } from './orphan-rows.js';
import { CutPageCheck } from './cut-file.js';
import { copyRows, type OrphanSource, type WalkedTable, WorkCopies } from './salvage-rows.js';

const MAX_PROBLEMS = 100;
/** The largest integer a JavaScript number holds exactly; larger ones cross the driver seam as text (see `select`). */
const EXACT = 9007199254740991;

export interface SalvagedTable {
  name: string;
  /** Rows copied. */
  rows: number;
  /** Rowids the walk stepped over inside damage (a table whose rowids follow each other lost about this many rows). */
  skipped: number;
  /** Rows read but not copied: `accept` refused them, the copy's constraints did, or a cut made them up. */
  refused: number;
}

export interface TableSalvage {
  tables: SalvagedTable[];
  /** The tables that could not be read at all, with why. */
  unreadable: string[];
  /** What was read around, in the words of a `.vdb` salvage (at most 100 lines). */
  problems: string[];
}

export interface TableSalvageOptions {
  /** False for a row no writer of the format wrote (a damaged cell read as a row): left out and counted. */
  accept?(table: string, row: SqlRow): boolean;
  /** Runs on the copy once its rows are in: its indexes (the source's own DDL is not taken over). */
  finish?(copy: SqliteConnection, tables: readonly SalvagedTable[]): void;
}

/**
 * Copies into a new file at `target` every row SQLite can read of each table of `source`, walking past damaged pages
 * by rowid as the salvage of a `.vdb` does (salvage-rows.ts), for SQLite files of other formats (a rosbag2 sqlite3
 * storage). The copy's tables have the source's columns and declared types, with `INTEGER PRIMARY KEY` and `NOT NULL`
 * kept, built from `PRAGMA table_xinfo`: not the source's own `CREATE` text, which a hostile file could make any SQL
 * of. No index, view, trigger, virtual table or generated column is taken over, nor read (`finish` adds the indexes
 * the format needs). A cut file is padded as for a `.vdb`, and the rows of the page the cut went through are kept
 * only where they read the same padded two ways. `source` is never written: read in place when SQLite can read it
 * as it is, else from private copies beside `target` (`WorkCopies`: a hot journal rolled back, a cut padded; two to
 * three times the file's size there then). For a copy to be read from: nothing is synced.
 */
export function salvageSqliteTables(
  driver: SqliteDriver,
  source: string,
  target: string,
  options: TableSalvageOptions = {},
): TableSalvage {
  const problems: string[] = [];
  const problem = (line: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(line);
  };
  const copies = new WorkCopies(driver, source, target, problem);
  const connections: SqliteConnection[] = [];
  try {
    const open = (path: string, readOnly: boolean) => {
      const db = driver.open(path, { readOnly });
      connections.push(db);
      return db;
    };
    const src = open(copies.work, true);
    const cutTwin = copies.twin ? open(copies.twin, true) : undefined;
    let tables: SqlRow[];
    try {
      tables = src
        .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
        .all();
    } catch (error) {
      throw new BagError('CORRUPT_FILE', `its schema does not read (${(error as Error).message}): nothing to copy`, {
        file: source,
      });
    }
    rmSync(target, { force: true });
    const out = open(target, false);
    const result: TableSalvage = { tables: [], unreadable: [], problems };
    const plain: Array<{ name: string; columns: Columns }> = [];
    for (const table of tables) {
      const name = String(table['name']);
      // A virtual table's rows come from its module's code, not from pages of the file: nothing to salvage, and
      // reading it would run that code.
      if (/^\s*CREATE\s+VIRTUAL\s+TABLE\b/i.test(String(table['sql'] ?? ''))) {
        result.unreadable.push(`${name}: a virtual table, not copied`);
        continue;
      }
      const columns = columnsOf(src, name);
      if (columns === undefined || columns.length === 0) result.unreadable.push(`${name}: its columns do not read`);
      else plain.push({ name, columns });
    }
    // One scan of the pages no b-tree reaches serves every table: each such page goes to the one table its rows fit.
    const shapes = plain.filter((t) => !t.columns.hidden).map((t) => orphanShape(t.name, t.columns));
    const orphans = copies.orphanSource(src, shapes, problem);
    for (const { name, columns } of plain) {
      out.exec(createTable(name, columns));
      result.tables.push(copyTable(src, out, cutTwin, name, columns, options, problem, result.unreadable, orphans));
    }
    options.finish?.(out, result.tables);
    return result;
  } finally {
    for (const db of connections.reverse()) {
      try {
        db.close();
      } catch {
        // a damaged source may refuse even that; the files go below
      }
    }
    copies.remove();
  }
}

interface Column {
  name: string;
  type: string;
  notNull: boolean;
  integerKey: boolean;
}

/** A table's stored columns; `hidden`: it has others (generated), so its records hold more than these. */
type Columns = Column[] & { hidden?: boolean };

function columnsOf(db: SqliteConnection, table: string): Columns | undefined {
  try {
    // Generated columns (hidden 2, 3) are left out: reading them evaluates the file's expressions on every row, and
    // their values follow from the others.
    const all = db.prepare(`PRAGMA table_xinfo(${quote(table)})`).all();
    const rows = all.filter((row) => Number(row['hidden'] ?? 0) === 0);
    const keys = rows.filter((row) => Number(row['pk']) > 0).length;
    const columns: Columns = rows.map((row) => {
      // The declared type decides the column's affinity (what an integer read as text turns back into); anything
      // beyond a plain type name is not needed for that and is not carried into the copy's DDL.
      const type = /^[A-Za-z][A-Za-z0-9 _]*(\([0-9, ]*\))?$/.test(String(row['type'] ?? '')) ? String(row['type']) : '';
      return {
        name: String(row['name']),
        type,
        notNull: Number(row['notnull']) === 1,
        integerKey: keys === 1 && Number(row['pk']) === 1 && type.toUpperCase() === 'INTEGER',
      };
    });
    columns.hidden = rows.length < all.length;
    return columns;
  } catch {
    return undefined;
  }
}

/** How the rows of `table` are recognised on pages no b-tree reaches, and read as `copyTable`'s select reads them. */
function orphanShape(table: string, columns: readonly Column[]): OrphanShape {
  return {
    table,
    columns: columns.map((c) => ({
      name: c.name,
      affinity: affinity(c.type),
      integerKey: c.integerKey,
      bigAsText: true,
    })),
  };
}

/** SQLite's rules for the affinity of a declared type (https://www.sqlite.org/datatype3.html, §3.1). */
function affinity(type: string): OrphanColumn['affinity'] {
  const t = type.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (/CHAR|CLOB|TEXT/.test(t)) return 'TEXT';
  if (t === '' || t.includes('BLOB')) return 'BLOB';
  if (/REAL|FLOA|DOUB/.test(t)) return 'REAL';
  return 'NUMERIC';
}

function createTable(table: string, columns: readonly Column[]): string {
  const parts = columns.map(
    (c) =>
      `${quote(c.name)}${c.type ? ` ${c.type}` : ''}${c.integerKey ? ' PRIMARY KEY' : ''}${c.notNull ? ' NOT NULL' : ''}`,
  );
  return `CREATE TABLE ${quote(table)} (${parts.join(', ')});`;
}

function copyTable(
  src: SqliteConnection,
  out: SqliteConnection,
  cutTwin: SqliteConnection | undefined,
  name: string,
  columns: readonly Column[],
  options: TableSalvageOptions,
  problem: (line: string) => void,
  unreadable: string[],
  orphans: OrphanSource,
): SalvagedTable {
  // An integer past 2^53 (a rosbag2 time in ns) comes as text: the drivers hand no exact bigint to every runtime
  // (Deno's node:sqlite refuses such a number), and text turns back into the integer in a column of integer affinity.
  // Not `abs(x) > 2^53`: abs() of the smallest integer (-2^63) fails the whole query with "integer overflow", and the
  // walk took each such row for damage (found by the orphan-rows test).
  const select = `SELECT rowid AS rowid, ${columns
    .map((c) => {
      const x = quote(c.name);
      return `CASE WHEN typeof(${x}) = 'integer' AND (${x} > ${EXACT} OR ${x} < -${EXACT}) THEN CAST(${x} AS TEXT) ELSE ${x} END AS ${x}`;
    })
    .join(', ')} FROM ${quote(name)}`;
  const salvaged: SalvagedTable = { name, rows: 0, skipped: 0, refused: 0 };
  try {
    src.prepare(`${select} LIMIT 0`).finalize();
  } catch (error) {
    // A table without rowids (`WITHOUT ROWID`), which the walk cannot step through; no format of ours has one.
    unreadable.push(`${name}: ${(error as Error).message}`);
    return salvaged;
  }
  const walked: WalkedTable = { name: /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : quote(name), select };
  const insert = out.prepare(
    `INSERT INTO ${quote(name)} (${columns.map((c) => quote(c.name)).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  );
  const cutCheck = cutTwin && CutPageCheck.open(cutTwin, walked);
  let cut = 0;
  const keep = (row: SqlRow, orphan = false): boolean => {
    if (options.accept && !options.accept(name, row)) return refuse();
    // A row of a page no b-tree reaches was read from the file's own bytes: no cut made it up.
    if (cutTwin && !orphan && !cutCheck?.intact(row)) {
      cut++;
      return refuse();
    }
    try {
      insert.run(...columns.map((c) => (row[c.name] ?? null) as SqlValue));
    } catch {
      return refuse(); // a constraint of the table (NOT NULL, a key twice): no row its writer wrote
    }
    salvaged.rows++;
    if ((salvaged.rows & 8191) === 0) {
      out.exec('COMMIT;');
      out.exec('BEGIN;');
    }
    return true;
  };
  const refuse = () => {
    salvaged.refused++;
    return false;
  };
  out.exec('BEGIN;');
  try {
    salvaged.skipped = copyRows(src, walked, keep, problem, undefined, orphans);
  } catch (error) {
    unreadable.push(`${name}: ${(error as Error).message}`);
  } finally {
    out.exec('COMMIT;');
  }
  if (cut > 0) problem(`${name}: ${cut} rows held bytes the cut took off: dropped`);
  return salvaged;
}

function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`;
}
