import type { SqlRow, SqlValue } from '../driver/driver.js';
import { type PageMap, readVarint, SqlitePages, TABLE_LEAF } from './sqlite-pages.js';

// The rows of table leaf pages no b-tree of the file reaches any more: what a damaged interior page cuts off. SQLite
// reaches rows only through their tree, so the row walk (salvage-rows.ts) lost every row under such a page (a zeroed
// 4 KiB in a rosbag2 storage of 3,091 messages cost 1,620 of them). `sqlite3 .recover` reads such pages directly;
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

/** The cut-off rows of each table, taken by rowid range. */
export interface OrphanRows {
  /** Removes and returns the rows of `table` with `after < rowid < before`, in rowid order. */
  take(table: string, after: number, before: number): SqlRow[];
  /** What the scan found and left out, once per scan (an empty list when it found nothing to say). */
  readonly notes: readonly string[];
  /** The rows not taken by the end of the walk (they lie among rows the walk read). */
  left(table: string): number;
}

/**
 * Scans the file (a salvage's private copy) for the cut-off rows of `shapes`. `validBytes`: bytes of the file that
 * are the file's (a cut file's copy is padded past them); a cell or overflow page reaching past them is left out.
 * `roots`: the root pages of every b-tree the schema names.
 */
export function scanOrphanRows(
  path: string,
  validBytes: number,
  roots: readonly number[],
  shapes: readonly OrphanShape[],
): OrphanRows {
  const found = new Map<string, Map<number, SqlRow>>(shapes.map((s) => [s.table, new Map()]));
  const notes: string[] = [];
  const pages = SqlitePages.open(path, validBytes);
  if (!pages) return orphanRows(found, ['not scanned for pages its b-trees no longer reach: not a UTF-8 SQLite file']);
  try {
    const map = pages.map(roots);
    const candidates: number[] = [];
    for (let n = 2; n <= pages.pageCount; n++) if (map.kind[n] === TABLE_LEAF && !map.reached[n]) candidates.push(n);
    if (candidates.length === 0) return orphanRows(found, notes);
    if (!map.freelistWhole) {
      notes.push(
        `${candidates.length} table pages no b-tree reaches left out: the free-page list does not read whole, so they cannot be told from freed pages (deleted rows)`,
      );
      return orphanRows(found, notes);
    }
    const reader = new CellReader(pages, map);
    let badCells = 0;
    let unmatchedPages = 0;
    const twice = new Map<string, Set<number>>();
    for (const n of candidates) {
      const cells = reader.cells(n);
      badCells += cells.bad;
      // Every cell of a page is a row of one table: the page goes to the one table all its cells fit.
      const fits = shapes.filter(
        (shape) => cells.rows.length > 0 && cells.rows.every((c) => fitsShape(c.values, shape)),
      );
      if (fits.length !== 1) {
        if (cells.rows.length > 0) unmatchedPages++;
        continue;
      }
      const shape = fits[0]!;
      const rows = found.get(shape.table)!;
      for (const cell of cells.rows) {
        if (rows.has(cell.rowid) || twice.get(shape.table)?.has(cell.rowid)) {
          // Two cut-off cells of one rowid: which one the table held cannot be told; neither is taken.
          rows.delete(cell.rowid);
          if (!twice.has(shape.table)) twice.set(shape.table, new Set());
          twice.get(shape.table)!.add(cell.rowid);
          continue;
        }
        rows.set(cell.rowid, rowOf(cell.rowid, cell.values, shape));
      }
    }
    for (const [table, rowids] of twice)
      notes.push(`${table}: ${rowids.size} rowids held twice by pages no b-tree reaches: left out`);
    if (badCells > 0) notes.push(`${badCells} cells of pages no b-tree reaches do not decode: left out`);
    if (unmatchedPages > 0)
      notes.push(`${unmatchedPages} pages no b-tree reaches hold rows of no one table read here: left out`);
    return orphanRows(found, notes);
  } finally {
    pages.close();
  }
}

function orphanRows(found: Map<string, Map<number, SqlRow>>, notes: string[]): OrphanRows {
  // The walk asks with `after` never going back: one cursor per table, rows passed over counted as left.
  const tables = new Map<string, { rows: SqlRow[]; next: number; passed: number }>();
  for (const [table, rows] of found)
    tables.set(table, {
      rows: [...rows.entries()].sort((a, b) => a[0] - b[0]).map(([, row]) => row),
      next: 0,
      passed: 0,
    });
  return {
    notes,
    take(table, after, before) {
      const t = tables.get(table);
      if (!t) return [];
      const rowid = (i: number) => Number(t.rows[i]!['rowid']);
      for (; t.next < t.rows.length && rowid(t.next) <= after; t.next++) t.passed++;
      const from = t.next;
      while (t.next < t.rows.length && rowid(t.next) < before) t.next++;
      return t.rows.slice(from, t.next);
    },
    left: (table) => {
      const t = tables.get(table);
      return t ? t.passed + t.rows.length - t.next : 0;
    },
  };
}

type RecordValue = { type: number; value: SqlValue; bytes?: Uint8Array };

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

/** Decodes the cells of table leaf pages, following overflow chains no b-tree and no other cell uses. */
class CellReader {
  private readonly used = new Set<number>();
  private overflowReads = 0;
  private readonly text = new TextDecoder('utf-8', { fatal: true });

  constructor(
    private readonly pages: SqlitePages,
    private readonly map: PageMap,
  ) {}

  cells(n: number): { rows: Array<{ rowid: number; values: RecordValue[] }>; bad: number } {
    const page = this.pages.page(n);
    const view = new DataView(page.buffer);
    const { usable, pageSize, validBytes } = this.pages;
    const count = view.getUint16(3);
    const pageStart = (n - 1) * pageSize;
    const rows: Array<{ rowid: number; values: RecordValue[] }> = [];
    let bad = 0;
    if (8 + 2 * count > usable) return { rows, bad: 1 };
    for (let i = 0; i < count; i++) {
      const at = view.getUint16(8 + 2 * i);
      const cell = at >= 8 + 2 * count && at < usable ? this.cell(page, at, pageStart, validBytes) : undefined;
      if (cell) rows.push(cell);
      else bad++;
    }
    return { rows, bad };
  }

  private cell(page: Uint8Array, at: number, pageStart: number, validBytes: number) {
    const { usable } = this.pages;
    const [size, sizeLength] = readVarint(page, at);
    const [rowid, rowidLength] = readVarint(page, at + sizeLength);
    if (!(size >= 0 && size <= 0x7fffffff && rowid >= 1 && rowid <= Number.MAX_SAFE_INTEGER)) return undefined;
    const start = at + sizeLength + rowidLength;
    const local = localPayload(size, usable);
    const end = start + local + (local < size ? 4 : 0);
    if (end > usable || pageStart + end > validBytes) return undefined;
    const payload = local === size ? page.subarray(start, start + size) : this.withOverflow(page, start, local, size);
    if (!payload) return undefined;
    const values = this.record(payload);
    return values && { rowid, values };
  }

  /** The payload of a cell that spills to overflow pages, or undefined when its chain is not wholly there. */
  private withOverflow(page: Uint8Array, start: number, local: number, size: number): Uint8Array | undefined {
    const { usable, pageSize, pageCount, validBytes } = this.pages;
    // Followed first, copied once whole: a damaged size cannot make this allocate more than the file holds.
    const chain = new Set<number>();
    let next = new DataView(page.buffer).getUint32(start + local);
    for (let filled = local; filled < size; filled += usable - 4) {
      if (next < 2 || next > pageCount || this.map.reached[next] || this.used.has(next) || chain.has(next))
        return undefined;
      const take = Math.min(usable - 4, size - filled);
      // Every page of every chain is read at most twice over the scan, however the damaged cells point.
      if ((next - 1) * pageSize + 4 + take > validBytes || this.overflowReads++ > 2 * pageCount) return undefined;
      chain.add(next);
      next = new DataView(this.pages.page(next).buffer).getUint32(0);
    }
    if (next !== 0) return undefined;
    const payload = new Uint8Array(size);
    payload.set(page.subarray(start, start + local));
    let filled = local;
    for (const n of chain) {
      const take = Math.min(usable - 4, size - filled);
      payload.set(this.pages.page(n).subarray(4, 4 + take), filled);
      filled += take;
      this.used.add(n);
    }
    return payload;
  }

  /** A record's values, or undefined when its header and its size disagree. */
  private record(payload: Uint8Array): RecordValue[] | undefined {
    const [headerSize, first] = readVarint(payload, 0);
    if (!(headerSize >= first && headerSize <= payload.length)) return undefined;
    const types: number[] = [];
    for (let at = first; at < headerSize; ) {
      const [type, length] = readVarint(payload, at);
      if (!Number.isSafeInteger(type) || type === 10 || type === 11) return undefined;
      types.push(type);
      at += length;
      if (at > headerSize) return undefined;
    }
    const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
    const values: RecordValue[] = [];
    let at = headerSize;
    for (const type of types) {
      const length = contentLength(type);
      if (at + length > payload.length) return undefined;
      const value = this.value(type, view, payload, at, length);
      if (!value) return undefined;
      values.push(value);
      at += length;
    }
    return at === payload.length ? values : undefined;
  }

  private value(
    type: number,
    view: DataView,
    payload: Uint8Array,
    at: number,
    length: number,
  ): RecordValue | undefined {
    if (type === 0) return { type, value: null };
    if (type === 8 || type === 9) return { type, value: type - 8 };
    if (type === 7) return { type, value: view.getFloat64(at) };
    if (type <= 6) {
      let big = 0n;
      for (let i = 0; i < length; i++) big = (big << 8n) | BigInt(payload[at + i]!);
      big = BigInt.asIntN(length * 8, big);
      const safe = big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER);
      return { type, value: safe ? Number(big) : big };
    }
    const bytes = payload.slice(at, at + length);
    if (type % 2 === 0) return { type, value: bytes };
    try {
      return { type, value: this.text.decode(bytes), bytes };
    } catch {
      return undefined; // text that is no UTF-8: no row SQLite stored
    }
  }
}

/** Bytes of a record value of serial type `type`. */
function contentLength(type: number): number {
  if (type <= 4) return [0, 1, 2, 3, 4][type]!;
  if (type === 5) return 6;
  if (type === 6 || type === 7) return 8;
  if (type <= 11) return 0;
  return Math.floor((type - 12) / 2);
}

/** How much of a table leaf cell's payload of `size` bytes the page itself holds (the file format, §1.6). */
function localPayload(size: number, usable: number): number {
  const max = usable - 35;
  if (size <= max) return size;
  const min = Math.floor(((usable - 12) * 32) / 255) - 23;
  const k = min + ((size - min) % (usable - 4));
  return k <= max ? k : min;
}
