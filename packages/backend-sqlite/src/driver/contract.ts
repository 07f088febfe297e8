import { pathToFileURL } from 'node:url';
/**
 * The SQLite driver seam (unjs/db0's connector shape): one tiny contract, one small adapter file per driver.
 * Everything above the drivers talks SQL through it and never imports a driver module itself; the drivers import
 * only this file, and `driver.ts` (which picks and loads one) imports them lazily.
 */

/** A value SQLite can bind or return. Blobs are `Uint8Array` (better-sqlite3's `Buffer` is a subclass). */
export type SqlValue = null | number | bigint | string | Uint8Array;
export type SqlRow = Record<string, SqlValue>;

export interface RunResult {
  changes: number | bigint;
  lastInsertRowid: number | bigint;
}

export interface SqliteStatement {
  run(...params: SqlValue[]): RunResult;
  /** The first row, or undefined. */
  get(...params: SqlValue[]): SqlRow | undefined;
  all(...params: SqlValue[]): SqlRow[];
  /** Rows one by one; the connection may be busy until the iterator finishes or `return()` is called. */
  iterate(...params: SqlValue[]): IterableIterator<SqlRow>;
  /** Releases the statement now instead of at garbage collection / connection close. Idempotent. */
  finalize(): void;
}

export interface SqliteConnection {
  readonly driver: DriverName;
  /**
   * Whether SQLite's defensive mode (`SQLITE_DBCONFIG_DEFENSIVE`) is on: better-sqlite3 always turns it on, `node:sqlite`
   * where it offers `enableDefensive` (Deno, Bun, recent Node) on read-only connections; `bun:sqlite` has no switch.
   */
  readonly defensive: boolean;
  /** Runs one or more statements without results. */
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
  /**
   * Aborts a running statement (`sqlite3_interrupt`) where the driver exposes it. None of the three drivers do
   * today (nor a progress handler), and every call here is synchronous on the caller's thread: a statement runs to
   * its end. Readers therefore refuse files whose queries could run without end (views, triggers, virtual tables,
   * generated columns; see `vdb/schema-guard.ts`), and the HTTP server runs bag work in worker threads it can
   * terminate.
   */
  interrupt?(): void;
}

export interface OpenOptions {
  /**
   * Open without write access; the file must exist. Default false (read-write, created when missing). A read-only
   * connection is also hardened for untrusted files (`READ_ONLY_PRAGMAS`, defensive mode where the driver has it).
   */
  readOnly?: boolean;
  /**
   * With `readOnly`: open the file as immutable (SQLite's `immutable=1` URI parameter), so that SQLite creates nothing
   * beside it (no `-shm`, `-wal` or journal) and takes no lock — a WAL-mode database in a folder that must stay as it
   * is. SQLite then reads no `-wal` file either: only for files whose `-wal` holds nothing. A driver whose library
   * takes no URI file names (better-sqlite3) refuses with NOT_SUPPORTED.
   */
  immutable?: boolean;
}

/** The `file:` URI that opens `path` immutable (percent-encoded, so `?`, `#` and `%` in a name stay part of it). */
export function immutableUri(path: string): string {
  return `${pathToFileURL(path).href}?immutable=1`;
}

/**
 * The statement API of the three native libraries, which differ only in what `get` answers for no row (`NoRow`),
 * whether `run` counts changes as bigint, and whether `iterate` exists: each driver declares its library as this.
 */
export interface NativeStatementOf<NoRow, Changes = number> {
  run(...params: SqlValue[]): { changes: Changes; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): SqlRow | NoRow;
  all(...params: SqlValue[]): SqlRow[];
  iterate(...params: SqlValue[]): IterableIterator<SqlRow>;
}

/**
 * Run on every read-only connection. `query_only` refuses any write even through a path read-only mode misses;
 * `trusted_schema = OFF` keeps functions with side effects and virtual tables out of anything the file's own schema
 * (views, triggers, defaults, index expressions) could make SQLite evaluate.
 */
export const READ_ONLY_PRAGMAS = 'PRAGMA query_only = ON; PRAGMA trusted_schema = OFF;';

export interface SqliteDriver {
  readonly name: DriverName;
  open(path: string, options?: OpenOptions): SqliteConnection;
}

export type DriverName = 'bun:sqlite' | 'node:sqlite' | 'better-sqlite3';
export const DRIVER_NAMES: readonly DriverName[] = ['bun:sqlite', 'node:sqlite', 'better-sqlite3'];

/** A dynamic import TypeScript does not try to resolve (the module may not exist in this runtime). */
export function importModule(specifier: string): Promise<unknown> {
  return import(specifier) as Promise<unknown>;
}
