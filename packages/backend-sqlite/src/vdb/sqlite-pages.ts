import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { readSqliteHeader, type SqliteHeader } from './sqlite-header.js';

// A SQLite file read as the pages its file format lays out (https://www.sqlite.org/fileformat2.html): which pages its
// b-trees and its free-page list reach, for the salvage's scan of the leaf pages damage cut off from their tree
// (orphan-rows.ts). Only what that scan needs; SQLite itself reads everything else.

export const TABLE_LEAF = 13;
const TABLE_INTERIOR = 5;
const INDEX_INTERIOR = 2;
/** Bytes read at once by the pass over every page. */
const BLOCK = 1 << 20;

/** Which pages of a file its b-trees and free-page list reach, and the page type of each page. */
export interface PageMap {
  /** Per page (index = page number): its first b-tree byte (the page type if it is a b-tree page). */
  kind: Uint8Array;
  /** Per page: 1 when a b-tree or the free-page list reaches it. */
  reached: Uint8Array;
  /** False when the free-page list does not read to its end (or counts other than the header says). */
  freelistWhole: boolean;
}

export class SqlitePages {
  readonly pageSize: number;

  private constructor(
    private readonly fd: number,
    private readonly header: SqliteHeader,
    /** Bytes of each page b-trees use (the page size less the reserved bytes at its end). */
    readonly usable: number,
    readonly pageCount: number,
    /** Bytes of the file that hold what was written: past them (a cut file's padding) nothing is the file's. */
    readonly validBytes: number,
  ) {
    this.pageSize = header.pageSize;
  }

  /** The file's pages, or undefined when it is no SQLite file with UTF-8 text (UTF-16 text is not decoded here). */
  static open(path: string, validBytes: number): SqlitePages | undefined {
    const header = readSqliteHeader(path);
    if (!header?.magic || !header.pageSize || header.pageSize - header.reserved < 480 || header.textEncoding !== 1)
      return undefined;
    const fd = openSync(path, 'r');
    let inFile: number;
    try {
      inFile = Math.floor(fstatSync(fd).size / header.pageSize);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    const pageCount = header.pageCount > 0 ? Math.min(header.pageCount, inFile) : inFile;
    return new SqlitePages(fd, header, header.pageSize - header.reserved, pageCount, validBytes);
  }

  /** Page `n` (from 1), as many of its bytes as the file has (the rest zeros). */
  page(n: number): Uint8Array {
    const bytes = new Uint8Array(this.pageSize);
    readSync(this.fd, bytes, 0, this.pageSize, (n - 1) * this.pageSize);
    return bytes;
  }

  /** Where a page's b-tree header starts: after the file header on page 1. */
  static headerAt(n: number): number {
    return n === 1 ? 100 : 0;
  }

  /**
   * One pass over the file for each page's type, then what the b-trees of `roots` (page 1's schema tree included)
   * and the free-page list reach. A damaged interior page reaches nothing below it: the pages under it are the ones
   * the scan looks at.
   */
  map(roots: readonly number[]): PageMap {
    const kind = new Uint8Array(this.pageCount + 1);
    const block = new Uint8Array(Math.max(BLOCK, this.pageSize));
    const perBlock = block.length / this.pageSize;
    for (let first = 1; first <= this.pageCount; first += perBlock) {
      const n = Math.min(perBlock, this.pageCount - first + 1);
      readSync(this.fd, block, 0, n * this.pageSize, (first - 1) * this.pageSize);
      for (let i = 0; i < n; i++) kind[first + i] = block[i * this.pageSize + SqlitePages.headerAt(first + i)]!;
    }
    const reached = new Uint8Array(this.pageCount + 1);
    // Marked as they are found, so that each page is on the stack once however many pages point at it; an interior
    // page's children read when it is taken off (kept for every interior page, a file of nothing else made of them
    // a list as long as the file has pointers).
    const stack: number[] = [];
    const reach = (n: number) => {
      if (n >= 1 && n <= this.pageCount && !reached[n]) {
        reached[n] = 1;
        stack.push(n);
      }
    };
    for (const root of [1, ...roots]) reach(root);
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (kind[n] === TABLE_INTERIOR || kind[n] === INDEX_INTERIOR)
        for (const child of this.childrenOf(this.page(n), SqlitePages.headerAt(n))) reach(child);
    }
    return { kind, reached, freelistWhole: this.markFreelist(reached) };
  }

  close(): void {
    closeSync(this.fd);
  }

  private childrenOf(page: Uint8Array, at: number): number[] {
    const view = new DataView(page.buffer, page.byteOffset, page.byteLength);
    const cells = view.getUint16(at + 3);
    const out = [view.getUint32(at + 8)];
    for (let i = 0; i < cells; i++) {
      const pointerAt = at + 12 + 2 * i;
      if (pointerAt + 2 > this.usable) break;
      const cell = view.getUint16(pointerAt);
      if (cell + 4 <= this.usable) out.push(view.getUint32(cell));
    }
    return out;
  }

  /** Marks the free-page list's trunk and leaf pages; false when it does not read whole. */
  private markFreelist(reached: Uint8Array): boolean {
    const said = this.header.freelistCount;
    let trunk = this.header.freelistTrunk;
    let count = 0;
    for (let trunks = 0; trunk !== 0; trunks++) {
      if (trunk > this.pageCount || trunks > this.pageCount) return false;
      const page = this.page(trunk);
      const view = new DataView(page.buffer);
      reached[trunk] = 1;
      count++;
      const leaves = view.getUint32(4);
      if (leaves > (this.usable - 8) / 4) return false;
      for (let i = 0; i < leaves; i++) {
        const leaf = view.getUint32(8 + 4 * i);
        if (leaf < 2 || leaf > this.pageCount) return false;
        reached[leaf] = 1;
        count++;
      }
      trunk = view.getUint32(0);
    }
    return count === said;
  }
}

/** A SQLite varint at `at`: its value (past 2^53 not exact: callers refuse such values) and its length. */
export function readVarint(bytes: Uint8Array, at: number): [value: number, length: number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at + i];
    if (byte === undefined) return [Number.NaN, i + 1];
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, i + 1];
  }
  const last = bytes[at + 8];
  return last === undefined ? [Number.NaN, 9] : [value * 256 + last, 9];
}
