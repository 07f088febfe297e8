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

/** The slice of `bun:sqlite` we use. */
interface NativeStatement extends NativeStatementOf<null> {
  finalize(): void;
}
interface NativeDatabase {
  exec(sql: string): void;
  prepare(sql: string): NativeStatement;
  close(throwOnError?: boolean): void;
}
type DatabaseConstructor = new (
  path: string,
  options: { readonly?: boolean; readwrite?: boolean; create?: boolean } | number,
) => NativeDatabase;

/** `bun:sqlite`: Bun's built-in driver. */
export async function createBunSqliteDriver(): Promise<SqliteDriver> {
  const mod = (await importModule('bun:sqlite')) as {
    Database: DatabaseConstructor;
    constants: { SQLITE_OPEN_READONLY: number; SQLITE_OPEN_URI: number };
  };
  const Database = mod.Database;
  // A URI file name is read as one only with SQLITE_OPEN_URI, which the options object cannot set.
  const immutableFlags = mod.constants.SQLITE_OPEN_READONLY | mod.constants.SQLITE_OPEN_URI;
  return {
    name: 'bun:sqlite',
    open(path, options = {}) {
      const flags = options.readOnly === true ? { readonly: true } : { readwrite: true, create: true };
      const immutable = options.readOnly === true && options.immutable === true;
      const db = wrap(immutable ? new Database(immutableUri(path), immutableFlags) : new Database(path, flags));
      if (options.readOnly === true) db.exec(READ_ONLY_PRAGMAS);
      return db;
    },
  };
}

function wrap(db: NativeDatabase): SqliteConnection {
  // bun closes with sqlite3_close_v2: a statement left unfinalized keeps the file (and its EXCLUSIVE lock) open
  // until garbage collection, so we finalize every statement we handed out.
  const statements = new Set<NativeStatement>();
  return {
    driver: 'bun:sqlite',
    // bun:sqlite has no way to set SQLITE_DBCONFIG_DEFENSIVE; the pragmas and the schema guard stand in for it.
    defensive: false,
    exec: (sql) => db.exec(sql),
    prepare(sql): SqliteStatement {
      const s = db.prepare(sql);
      statements.add(s);
      return {
        run: s.run.bind(s),
        get: (...p: SqlValue[]) => s.get(...p) ?? undefined,
        all: s.all.bind(s),
        iterate: s.iterate.bind(s),
        finalize() {
          if (statements.delete(s)) s.finalize();
        },
      };
    },
    close() {
      for (const s of statements) s.finalize();
      statements.clear();
      db.close(false);
    },
  };
}
