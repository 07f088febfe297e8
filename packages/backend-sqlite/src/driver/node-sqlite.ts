import {
  immutableUri,
  importModule,
  type NativeStatementOf,
  READ_ONLY_PRAGMAS,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteStatement,
  type SqlValue,
} from './contract.js';

/** The slice of `node:sqlite` (`DatabaseSync`, Node ≥ 22.5, Deno, Bun) we use. */
type NativeStatement = Omit<NativeStatementOf<undefined, number | bigint>, 'iterate'> &
  Partial<Pick<NativeStatementOf<undefined>, 'iterate'>>;
interface NativeDatabase {
  exec(sql: string): void;
  prepare(sql: string): NativeStatement;
  close(): void;
  /** Deno, Bun and recent Node: `SQLITE_DBCONFIG_DEFENSIVE`. */
  enableDefensive?(active: boolean): void;
}
type DatabaseSyncConstructor = new (path: string, options: { readOnly: boolean }) => NativeDatabase;

/** `node:sqlite`: built into Deno and Node ≥ 22.5 (experimental there). */
export async function createNodeSqliteDriver(): Promise<SqliteDriver> {
  const mod = (await importModule('node:sqlite')) as { DatabaseSync: DatabaseSyncConstructor };
  const DatabaseSync = mod.DatabaseSync;
  if (typeof DatabaseSync !== 'function') throw new Error('node:sqlite has no DatabaseSync');
  return {
    name: 'node:sqlite',
    open(path, options = {}) {
      const readOnly = options.readOnly === true;
      const native = new DatabaseSync(readOnly && options.immutable === true ? immutableUri(path) : path, { readOnly });
      let defensive = false;
      if (readOnly) {
        try {
          if (typeof native.enableDefensive === 'function') {
            native.enableDefensive(true);
            defensive = true;
          }
          native.exec(READ_ONLY_PRAGMAS);
        } catch (error) {
          native.close();
          throw error;
        }
      }
      return wrap(native, defensive);
    },
  };
}

/**
 * Deno's `StatementSync.iterate()` ends quietly when a step fails (a damaged page reads as the end of the result,
 * where `all()` and `get()` throw SQLITE_CORRUPT), so a damaged file would read as a shorter one. There, an iteration
 * that runs to its end is checked against a COUNT(*) of the same query, which walks the same b-tree pages (and throws
 * where they are damaged) but not the blobs' overflow pages; fewer rows than counted means the iteration was cut short.
 */
const VERIFY_ITERATION = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

/**
 * Deno's `node:sqlite` hands each blob out in a buffer V8 does not count as external memory, so nothing prompts a
 * garbage collection while a cursor reads: reading a 2 GiB bag of 1 MiB rows peaked at 885 MiB RSS (Node and Bun:
 * about 100 MiB). Measured by hand (Deno 2.9): matching each big blob with an `ArrayBuffer` of its size, which V8 does
 * count, brought 2 GiB down to 204 MiB (cursor) and 300 MiB (async iterator), and counting it four times over made it
 * worse (glibc hands such buffers out of the heap, zeroed); a full collection every 8 MiB read kept 256 MiB at 60 MiB.
 * So on Deno the reader asks V8 for a collection each time `GC_EVERY` bytes of blobs have gone by: `gc` is obtained
 * once through `node:v8`/`node:vm` (the `--expose_gc` flag only makes the function reachable), and a scavenge (the
 * blobs' wrappers are young objects) of the reader's small heap is cheap. Where `gc` cannot be had, the accounting.
 */
const ON_DENO = VERIFY_ITERATION;
const BIG_BLOB = 64 * 1024;
const GC_EVERY = 64 * 1024 * 1024;
let blobBytes = 0;
let collect: ((options?: { type: 'minor' | 'major' }) => void) | undefined | null = null;
/** Held (one at a time) so no optimiser can drop the accounting allocation as unused. */
let _accounted: ArrayBuffer | undefined;

async function loadCollector(): Promise<void> {
  try {
    const v8 = (await import('node:v8')) as { setFlagsFromString(flags: string): void };
    const vm = (await import('node:vm')) as { runInNewContext(code: string): unknown };
    v8.setFlagsFromString('--expose_gc');
    const gc = vm.runInNewContext('gc');
    collect = typeof gc === 'function' ? (gc as (options?: { type: 'minor' | 'major' }) => void) : undefined;
  } catch {
    collect = undefined;
  }
}
if (ON_DENO) void loadCollector();

function accountBlobs(row: Record<string, SqlValue>): void {
  for (const key in row) {
    const value = row[key];
    if (!(value instanceof Uint8Array) || value.byteLength < BIG_BLOB) continue;
    if (collect) {
      blobBytes += value.byteLength;
      if (blobBytes >= GC_EVERY) {
        blobBytes = 0;
        // A scavenge: the blobs' wrappers are young objects, and freeing them frees the blobs. By hand (2 GiB, loaded
        // machine) a full collection every 64 MiB cost 3–6× the read time, a scavenge about 2×, with the same peak.
        collect({ type: 'minor' });
      }
    } else _accounted = new ArrayBuffer(value.byteLength);
  }
}

function wrap(db: NativeDatabase, defensive: boolean): SqliteConnection {
  return {
    driver: 'node:sqlite',
    defensive,
    exec: (sql) => db.exec(sql),
    prepare(sql): SqliteStatement {
      const s = db.prepare(sql);
      // Node 22.5–22.12 lack `iterate`; fall back to a materialised result there.
      let iterate = s.iterate ? s.iterate.bind(s) : (...p: SqlValue[]) => s.all(...p)[Symbol.iterator]();
      if (VERIFY_ITERATION && s.iterate && /^\s*SELECT\b/i.test(sql)) iterate = verified(db, sql, iterate);
      return { run: s.run.bind(s), get: s.get.bind(s), all: s.all.bind(s), iterate, finalize: noop };
    },
    close: () => db.close(),
  };
}

function verified(
  db: NativeDatabase,
  sql: string,
  iterate: (...p: SqlValue[]) => IterableIterator<Record<string, SqlValue>>,
): (...p: SqlValue[]) => IterableIterator<Record<string, SqlValue>> {
  return (...params) => {
    const rows = iterate(...params);
    let seen = 0;
    const it: IterableIterator<Record<string, SqlValue>> = {
      [Symbol.iterator]: () => it,
      next() {
        const step = rows.next();
        if (step.done !== true) {
          seen++;
          if (ON_DENO) accountBlobs(step.value);
          return step;
        }
        const counted = db.prepare(`SELECT COUNT(*) AS n FROM (${sql.replace(/;\s*$/, '')})`).get(...params)?.['n'];
        if (counted !== undefined && Number(counted) !== seen) {
          throw new Error(
            `database disk image is malformed (the result ended after ${seen} of ${Number(counted)} rows)`,
          );
        }
        return step;
      },
      return(value?: unknown) {
        rows.return?.(value);
        return { done: true, value: undefined };
      },
    };
    return it;
  };
}

function noop(): void {}
