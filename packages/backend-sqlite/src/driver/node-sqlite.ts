import {
  importModule,
  READ_ONLY_PRAGMAS,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteStatement,
  type SqlValue,
} from './driver.js';

/** The slice of `node:sqlite` (`DatabaseSync`, Node ≥ 22.5, Deno, Bun) we use. */
interface NativeStatement {
  run(...params: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): Record<string, SqlValue> | undefined;
  all(...params: SqlValue[]): Record<string, SqlValue>[];
  iterate?(...params: SqlValue[]): IterableIterator<Record<string, SqlValue>>;
}
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
      const native = new DatabaseSync(path, { readOnly });
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
