import type { SqlRow } from '../driver/driver.js';
import { type LeafCell, LeafCells, type RecordValue } from './leaf-cells.js';
import { SqlitePages, TABLE_LEAF } from './sqlite-pages.js';

// The rows of table leaf pages no b-tree of the file reaches any more: what a damaged interior page cuts off. SQLite
// reaches rows only through their tree, so the row walk (salvage-rows.ts) lost every row under such a page (the
// root page of a rosbag2 storage's messages zeroed: 0 of 3,091 read). `sqlite3 .recover` reads such pages directly;
// none of the three drivers offers it, so this does the same for the tables a salvage walks: each leaf page that no
// tree and no free-page list reaches is decoded cell by cell, and its rows are handed to the walk in the rowid gaps
// it could not read. Pages on the free-page list hold rows that were deleted (a ring-buffer recording's evicted
// frames): when that list does not read whole, freed pages cannot be told from cut-off ones, and none is taken.

/** A column as the scan recognises it: its declared affinity, and how the walk's `select` returns its values. */
export interface OrphanColumn {
  name: string;
  /** SQLite's affinity of the declared type: a TEXT column holds no number, an INTEGER PRIMARY KEY none at all. */
  affinity: 'INTEGER' | 'REAL' | 'NUMERIC' | 'TEXT' | 'BLOB';
  /** The rowid alias (`INTEGER PRIMARY KEY`): stored as NULL, read as the rowid. */
  integerKey?: boolean;
  /** Text read as its bytes, as `CAST(x AS BLOB)` gives them (a .vdb payload stored as text). */
  textAsBlob?: boolean;
  /** An integer past 2^53 read as its decimal text, as `CAST(x AS TEXT)` gives it. */
  bigAsText?: boolean;
}

/** A table whose cut-off rows are looked for: records of exactly these columns, in stored order. */
export interface OrphanShape {
  table: string;
  columns: readonly OrphanColumn[];
}

/**
 * The cut-off rows of each table, taken by rowid range. Only where they are is kept (a page and its rowid range):
 * each page is decoded again when its rows are taken, so a scan that finds millions of rows holds one page's.
 */
export interface OrphanRows {
  /**
   * The rows of `table` with `after < rowid < before`, in rowid order, each once: `after` never goes back between
   * calls, and rows at or below it not taken yet are passed over (counted by `left`).
   */
  take(table: string, after: number, before: number): Iterable<SqlRow>;
  /** What the scan found and left out, once per scan (an empty list when it found nothing to say). */
  readonly notes: readonly string[];
  /** The rows not taken by the end of the walk (they lie among rows the walk read). */
  left(table: string): number;
  /** Closes the file. */
  close(): void;
}

/**
 * Scans the file (a salvage's private copy, or the file itself) for the cut-off rows of `shapes`. `validBytes`: bytes
 * of the file that are the file's (a cut file's copy is padded past them); a cell or overflow page reaching past them
 * is left out. `roots`: the root pages of every b-tree the schema names.
 */
export function scanOrphanRows(
  path: string,
  validBytes: number,
  roots: readonly number[],
  shapes: readonly OrphanShape[],
): OrphanRows {
  const pages = SqlitePages.open(path, validBytes);
  if (!pages) return noRows(['not scanned for pages its b-trees no longer reach: not a UTF-8 SQLite file']);
  try {
    const map = pages.map(roots);
    const candidates: number[] = [];
    for (let n = 2; n <= pages.pageCount; n++) if (map.kind[n] === TABLE_LEAF && !map.reached[n]) candidates.push(n);
    if (candidates.length === 0) {
      pages.close();
      return noRows([]);
    }
    if (!map.freelistWhole) {
      pages.close();
      return noRows([
        `${candidates.length} table pages no b-tree reaches left out: the free-page list does not read whole, so they cannot be told from freed pages (deleted rows)`,
      ]);
    }
    const cells = new LeafCells(pages, map);
    const entries = new Map<string, PageEntry[]>(shapes.map((shape) => [shape.table, []]));
    let badCells = 0;
    let unmatchedPages = 0;
    let twiceOnPage = 0;
    for (const page of candidates) {
      const read = cells.read(page, true);
      badCells += read.bad.length;
      if (read.cells.length === 0) continue;
      // Every cell of a page is a row of one table: the page goes to the one table all its cells fit.
      const fits = shapes.filter((shape) => read.cells.every((cell) => fitsShape(cell.values, shape)));
      if (fits.length !== 1) {
        unmatchedPages++;
        continue;
      }
      const rowids = read.cells.map((cell) => cell.rowid);
      if (new Set(rowids).size !== rowids.length) {
        twiceOnPage++;
        continue;
      }
      entries.get(fits[0]!.table)!.push({
        page,
        first: Math.min(...rowids),
        last: Math.max(...rowids),
        rows: rowids.length,
        skip: read.bad,
      });
    }
    const notes: string[] = [];
    const tables = new Map<string, TableOrphans>();
    for (const shape of shapes) {
      const { kept, overlapping } = withoutOverlaps(entries.get(shape.table)!);
      if (overlapping > 0)
        notes.push(
          `${shape.table}: ${overlapping} pages no b-tree reaches hold rowids another such page holds: left out`,
        );
      tables.set(shape.table, { shape, entries: kept, next: 0, rows: undefined, at: 0, passed: 0 });
    }
    if (badCells > 0) notes.push(`${badCells} cells of pages no b-tree reaches do not decode: left out`);
    if (unmatchedPages > 0)
      notes.push(`${unmatchedPages} pages no b-tree reaches hold rows of no one table read here: left out`);
    if (twiceOnPage > 0) notes.push(`${twiceOnPage} pages no b-tree reaches hold a rowid twice: left out`);
    return orphanRows(tables, cells, notes, () => pages.close());
  } catch (error) {
    pages.close();
    throw error;
  }
}

/** A page of cut-off rows: its rowid range, its rows, and the cells the scan refused. */
interface PageEntry {
  page: number;
  first: number;
  last: number;
  rows: number;
  skip: number[];
}

interface TableOrphans {
  shape: OrphanShape;
  /** In rowid order, no two overlapping. */
  entries: PageEntry[];
  /** The entry being taken, its rows (decoded again) and how far. */
  next: number;
  rows: LeafCell[] | undefined;
  at: number;
  passed: number;
}

/**
 * The leaf pages of one b-tree hold rowid ranges that do not overlap. Two cut-off pages that do are no leaves of
 * one tree (a page copied over another, a stale copy): which holds the table's rows cannot be told, so neither is
 * taken.
 */
function withoutOverlaps(entries: PageEntry[]): { kept: PageEntry[]; overlapping: number } {
  entries.sort((a, b) => a.first - b.first);
  const out = new Set<PageEntry>();
  let reach = -1;
  let reacher: PageEntry | undefined;
  for (const entry of entries) {
    if (entry.first <= reach) {
      out.add(entry);
      if (reacher) out.add(reacher);
    }
    if (entry.last > reach) {
      reach = entry.last;
      reacher = entry;
    }
  }
  return { kept: entries.filter((e) => !out.has(e)), overlapping: out.size };
}

function noRows(notes: string[]): OrphanRows {
  return { notes, take: () => [], left: () => 0, close: () => {} };
}

function orphanRows(
  tables: Map<string, TableOrphans>,
  cells: LeafCells,
  notes: string[],
  close: () => void,
): OrphanRows {
  return {
    notes,
    *take(table, after, before) {
      const t = tables.get(table);
      if (!t) return;
      for (; t.next < t.entries.length; t.next++, t.rows = undefined, t.at = 0) {
        const entry = t.entries[t.next]!;
        if (entry.first >= before) return;
        if (t.rows === undefined && entry.last <= after) {
          t.passed += entry.rows;
          continue;
        }
        t.rows ??= cells.read(entry.page, false, entry.skip).cells.sort((a, b) => a.rowid - b.rowid);
        for (; t.at < t.rows.length; t.at++) {
          const cell = t.rows[t.at]!;
          if (cell.rowid >= before) return;
          if (cell.rowid <= after) t.passed++;
          else yield rowOf(cell.rowid, cell.values, t.shape);
        }
      }
    },
    left(table) {
      const t = tables.get(table);
      if (!t) return 0;
      let left = t.passed + (t.rows ? t.rows.length - t.at : 0);
      for (let i = t.rows ? t.next + 1 : t.next; i < t.entries.length; i++) left += t.entries[i]!.rows;
      return left;
    },
    close,
  };
}

function fitsShape(values: readonly RecordValue[], shape: OrphanShape): boolean {
  if (values.length !== shape.columns.length) return false;
  return shape.columns.every((column, i) => {
    const t = values[i]!.type;
    // The rowid alias is stored as NULL; a TEXT column turns every number it is given into text.
    if (column.integerKey) return t === 0;
    if (column.affinity === 'TEXT') return t === 0 || t >= 12;
    return true;
  });
}

function rowOf(rowid: number, values: readonly RecordValue[], shape: OrphanShape): SqlRow {
  const row: SqlRow = { rowid };
  shape.columns.forEach((column, i) => {
    const v = values[i]!;
    if (column.integerKey) row[column.name] = rowid;
    else if (column.textAsBlob && v.bytes && typeof v.value === 'string') row[column.name] = v.bytes;
    else if (typeof v.value === 'bigint') row[column.name] = column.bigAsText ? v.value.toString() : Number(v.value);
    else row[column.name] = v.value;
  });
  return row;
}
