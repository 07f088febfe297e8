import { BagError } from '@vlink/bag-core';
import { DRIVER_NAMES, type DriverName, type SqliteDriver } from './contract.js';

// Picks and loads a driver. The contract the drivers implement is in contract.ts, re-exported here: everything
// above the drivers imports it from this file.
export * from './contract.js';

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
