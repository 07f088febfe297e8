import { closeSync, openSync, readSync } from 'node:fs';

// The 100-byte header of a SQLite file (https://www.sqlite.org/fileformat2.html, §1.3): what the salvage reads of it
// before SQLite does (cut-file.ts: how much a cut took; sqlite-pages.ts: the page map).

const MAGIC = 'SQLite format 3\0';

export interface SqliteHeader {
  /** The header string is SQLite's. */
  magic: boolean;
  /** Bytes per page; 0 when the header's value is none SQLite writes (a power of two, 512 to 65,536). */
  pageSize: number;
  /** Bytes at the end of each page that b-trees do not use. */
  reserved: number;
  /** The database's size in pages, as the header says it (0: not said). */
  pageCount: number;
  /** The first trunk page of the free-page list (0: none) and how many pages the list holds. */
  freelistTrunk: number;
  freelistCount: number;
  /** 1: UTF-8, 2 and 3: UTF-16. */
  textEncoding: number;
  /** The read and write versions say WAL mode: a read-only open needs the file's `-shm` then. */
  walMode: boolean;
}

export function parseSqliteHeader(head: Uint8Array): SqliteHeader {
  const view = new DataView(head.buffer, head.byteOffset, 100);
  const raw = view.getUint16(16);
  const pageSize = raw === 1 ? 65536 : raw;
  return {
    magic: new TextDecoder().decode(head.subarray(0, 16)) === MAGIC,
    pageSize: pageSize >= 512 && (pageSize & (pageSize - 1)) === 0 ? pageSize : 0,
    reserved: head[20]!,
    pageCount: view.getUint32(28),
    freelistTrunk: view.getUint32(32),
    freelistCount: view.getUint32(36),
    textEncoding: view.getUint32(56),
    walMode: head[18] === 2 || head[19] === 2,
  };
}

/** The header of the file at `path`, or undefined when it is shorter than one. */
export function readSqliteHeader(path: string): SqliteHeader | undefined {
  const head = new Uint8Array(100);
  const fd = openSync(path, 'r');
  try {
    return readSync(fd, head, 0, 100, 0) === 100 ? parseSqliteHeader(head) : undefined;
  } finally {
    closeSync(fd);
  }
}
