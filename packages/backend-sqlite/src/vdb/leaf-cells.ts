import type { SqlValue } from '../driver/driver.js';
import { type PageMap, readVarint, type SqlitePages } from './sqlite-pages.js';

// The cells of a table leaf page decoded as the file format lays them out (https://www.sqlite.org/fileformat2.html,
// §1.6 and §2.1): a payload size, a rowid, the record (its header of serial types, then the values), and for a large
// payload a chain of overflow pages. For the rows of pages no b-tree reaches (orphan-rows.ts); everything is checked,
// as such a page may hold anything.

/** A value of a record, with its serial type (the column's stored type) and, for text, its bytes. */
export interface RecordValue {
  type: number;
  value: SqlValue;
  bytes?: Uint8Array;
}

export interface LeafCell {
  /** The cell's place in the page's cell pointer array. */
  index: number;
  rowid: number;
  values: RecordValue[];
}

/** Decodes the cells of table leaf pages, following overflow chains that no b-tree and no other cell uses. */
export class LeafCells {
  /** Overflow pages claimed by a cell (each belongs to one). */
  private readonly used = new Set<number>();
  private overflowReads = 0;
  private readonly text = new TextDecoder('utf-8', { fatal: true });

  constructor(
    private readonly pages: SqlitePages,
    private readonly map: PageMap,
  ) {}

  /**
   * The cells of page `n` that decode (and how many do not). `claim`: the first reading, which claims each cell's
   * overflow pages (a page another cell claimed fails the cell); later readings of the page take the cells the first
   * one took, given `skip`, the indexes it refused.
   */
  read(n: number, claim: boolean, skip: readonly number[] = []): { cells: LeafCell[]; bad: number[] } {
    const page = this.pages.page(n);
    const view = new DataView(page.buffer);
    const { usable, pageSize } = this.pages;
    const count = view.getUint16(3);
    const cells: LeafCell[] = [];
    const bad: number[] = [];
    if (8 + 2 * count > usable) return { cells, bad: [-1] };
    for (let i = 0; i < count; i++) {
      if (skip.includes(i)) continue;
      const at = view.getUint16(8 + 2 * i);
      const cell = at >= 8 + 2 * count && at < usable ? this.cell(page, at, (n - 1) * pageSize, claim) : undefined;
      if (cell) cells.push({ index: i, ...cell });
      else bad.push(i);
    }
    return { cells, bad };
  }

  private cell(page: Uint8Array, at: number, pageStart: number, claim: boolean) {
    const { usable, validBytes } = this.pages;
    const [size, sizeLength] = readVarint(page, at);
    const [rowid, rowidLength] = readVarint(page, at + sizeLength);
    if (!(size >= 0 && size <= 0x7fffffff && rowid >= 1 && rowid <= Number.MAX_SAFE_INTEGER)) return undefined;
    const start = at + sizeLength + rowidLength;
    const local = localPayload(size, usable);
    const end = start + local + (local < size ? 4 : 0);
    if (end > usable || pageStart + end > validBytes) return undefined;
    const payload =
      local === size ? page.subarray(start, start + size) : this.withOverflow(page, start, local, size, claim);
    if (!payload) return undefined;
    const values = this.record(payload);
    return values && { rowid, values };
  }

  /** The payload of a cell that spills to overflow pages, or undefined when its chain is not wholly there. */
  private withOverflow(
    page: Uint8Array,
    start: number,
    local: number,
    size: number,
    claim: boolean,
  ): Uint8Array | undefined {
    const { usable, pageSize, pageCount, validBytes } = this.pages;
    // Followed first, copied once whole: a damaged size cannot make this allocate more than the file holds.
    const chain = new Set<number>();
    let next = new DataView(page.buffer).getUint32(start + local);
    for (let filled = local; filled < size; filled += usable - 4) {
      if (next < 2 || next > pageCount || this.map.reached[next] || chain.has(next)) return undefined;
      if (claim && this.used.has(next)) return undefined;
      const take = Math.min(usable - 4, size - filled);
      // Every page of every chain is read at most a few times over the scan, however the damaged cells point.
      if ((next - 1) * pageSize + 4 + take > validBytes || this.overflowReads++ > 4 * pageCount) return undefined;
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
      if (claim) this.used.add(n);
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

  private value(type: number, view: DataView, payload: Uint8Array, at: number, length: number) {
    if (type === 0) return { type, value: null };
    if (type === 8 || type === 9) return { type, value: type - 8 };
    if (type === 7) return { type, value: view.getFloat64(at) };
    if (type <= 6) return { type, value: integer(type, view, at) };
    const bytes = payload.slice(at, at + length);
    if (type % 2 === 0) return { type, value: bytes };
    try {
      return { type, value: this.text.decode(bytes), bytes };
    } catch {
      return undefined; // text that is no UTF-8: no row SQLite stored
    }
  }
}

/** A big-endian two's-complement integer of serial type 1 to 6; past 2^53 as a bigint. */
function integer(type: number, view: DataView, at: number): number | bigint {
  switch (type) {
    case 1:
      return view.getInt8(at);
    case 2:
      return view.getInt16(at);
    case 3:
      return (view.getInt8(at) << 16) | view.getUint16(at + 1);
    case 4:
      return view.getInt32(at);
    case 5:
      return view.getInt16(at) * 2 ** 32 + view.getUint32(at + 2);
    default: {
      const big = view.getBigInt64(at);
      return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
    }
  }
}

/** Bytes of a record value of serial type `type`. */
function contentLength(type: number): number {
  if (type <= 4) return type;
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
