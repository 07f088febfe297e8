import { importModule, type SqliteConnection, type SqliteDriver, type SqliteStatement, type SqlValue } from './driver.js';

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
      return wrap(new DatabaseSync(path, { readOnly: options.readOnly === true }));
    },
  };
}

function wrap(db: NativeDatabase): SqliteConnection {
  return {
    driver: 'node:sqlite',
    exec: (sql) => db.exec(sql),
    prepare(sql): SqliteStatement {
      const s = db.prepare(sql);
      // Node 22.5–22.12 lack `iterate`; fall back to a materialised result there.
      const iterate = s.iterate ? s.iterate.bind(s) : (...p: SqlValue[]) => s.all(...p)[Symbol.iterator]();
      return { run: s.run.bind(s), get: s.get.bind(s), all: s.all.bind(s), iterate, finalize: noop };
    },
    close: () => db.close(),
  };
}

function noop(): void {}
