import { BagError } from '@vlink/bag-core';

/**
 * The SQLite driver seam (unjs/db0's connector shape): one tiny contract, one small adapter file per driver.
 * Everything above this file talks SQL through it and never imports a driver module itself.
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

const INSTALL_HINT = 'npm install better-sqlite3@12';

/** Loads one named driver; throws `DRIVER_MISSING` when this runtime cannot provide it. */
export async function loadNamedDriver(name: DriverName): Promise<SqliteDriver> {
  try {
    switch (name) {
      case 'bun:sqlite':
        return probe(await (await import('./bun-sqlite.js')).createBunSqliteDriver());
      case 'node:sqlite':
        return probe(await (await import('./node-sqlite.js')).createNodeSqliteDriver());
      case 'better-sqlite3':
        return probe(await (await import('./better-sqlite3.js')).createBetterSqlite3Driver());
    }
  } catch (error) {
    if (BagError.isInstance(error)) throw error;
    throw new BagError(
      'DRIVER_MISSING',
      `SQLite driver ${name} is not available in this runtime (${describe(error)})` +
        (name === 'better-sqlite3' ? `; install it: ${INSTALL_HINT}` : ''),
      { cause: error },
    );
  }
  throw new BagError('INVALID_ARGUMENT', `unknown SQLite driver "${String(name)}" (${DRIVER_NAMES.join(', ')})`);
}

/** Opens and closes an in-memory database: some runtimes import a native addon fine and fail only on first use. */
function probe(driver: SqliteDriver): SqliteDriver {
  driver.open(':memory:').close();
  return driver;
}

export function isDriverName(value: string): value is DriverName {
  return (DRIVER_NAMES as readonly string[]).includes(value);
}

/**
 * Picks a driver once per process: `VLINK_SQLITE_DRIVER` if set; else `bun:sqlite` on Bun; else `node:sqlite` when
 * it imports (Deno, Node ≥ 22.5); else `better-sqlite3`. Every module is loaded with a dynamic `import()`, so a
 * runtime never touches a module it lacks.
 */
export function loadDriver(): Promise<SqliteDriver> {
  cached ??= pick().catch((error: unknown) => {
    cached = undefined; // let a later call retry, e.g. after the user installed better-sqlite3
    throw error;
  });
  return cached;
}
let cached: Promise<SqliteDriver> | undefined;

async function pick(): Promise<SqliteDriver> {
  const forced = readEnv('VLINK_SQLITE_DRIVER');
  if (forced) {
    if (!isDriverName(forced)) {
      throw new BagError(
        'INVALID_ARGUMENT',
        `VLINK_SQLITE_DRIVER="${forced}" is not one of ${DRIVER_NAMES.join(', ')}`,
      );
    }
    return loadNamedDriver(forced);
  }
  return pickDriver(isBun() ? ['bun:sqlite'] : ['node:sqlite', 'better-sqlite3']);
}

/** The first driver of `order` that loads; `DRIVER_MISSING` naming the package to install when none does. */
export async function pickDriver(order: readonly DriverName[]): Promise<SqliteDriver> {
  const failures: string[] = [];
  for (const name of order) {
    try {
      return await loadNamedDriver(name);
    } catch (error) {
      failures.push(describe(error));
    }
  }
  throw new BagError(
    'DRIVER_MISSING',
    `no SQLite driver available for .vdb files; install one: ${INSTALL_HINT} (tried ${failures.join('; ')})`,
  );
}

export function isBun(): boolean {
  return typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined';
}

function readEnv(name: string): string | undefined {
  try {
    return (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name] || undefined;
  } catch {
    return undefined; // Deno without --allow-env
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A dynamic import TypeScript does not try to resolve (the module may not exist in this runtime). */
export function importModule(specifier: string): Promise<unknown> {
  return import(specifier) as Promise<unknown>;
}
