import { BagError } from '@vlink/bag-core';
import {
  importModule,
  type NativeStatementOf,
  READ_ONLY_PRAGMAS,
  type SqliteConnection,
  type SqliteDriver,
  type SqliteStatement,
} from './contract.js';

/** The slice of better-sqlite3 (v12) we use. */
type NativeStatement = NativeStatementOf<undefined>;
interface NativeDatabase {
  exec(sql: string): void;
  prepare(sql: string): NativeStatement;
  close(): void;
}
type DatabaseConstructor = new (path: string, options: { readonly: boolean; fileMustExist: boolean }) => NativeDatabase;

/** better-sqlite3: the Node ≤ 22 driver (a native addon; Bun and Deno cannot load it). */
export async function createBetterSqlite3Driver(): Promise<SqliteDriver> {
  const mod = (await importModule('better-sqlite3')) as { default: DatabaseConstructor };
  const Database = mod.default;
  return {
    name: 'better-sqlite3',
    open(path, options = {}) {
      const readOnly = options.readOnly === true;
      if (readOnly && options.immutable === true)
        throw new BagError(
          'NOT_SUPPORTED',
          'better-sqlite3 cannot open a file immutable (it takes no URI file names)',
          {
            file: path,
          },
        );
      const db = wrap(new Database(path, { readonly: readOnly, fileMustExist: readOnly }));
      if (readOnly) db.exec(READ_ONLY_PRAGMAS);
      return db;
    },
  };
}

function wrap(db: NativeDatabase): SqliteConnection {
  return {
    driver: 'better-sqlite3',
    // better-sqlite3 opens every connection with SQLITE_DBCONFIG_DEFENSIVE (its database.cpp).
    defensive: true,
    exec: (sql) => void db.exec(sql),
    prepare(sql): SqliteStatement {
      const s = db.prepare(sql);
      // Bound native methods: no wrapper frame and no argument copy on the hot path.
      return { run: s.run.bind(s), get: s.get.bind(s), all: s.all.bind(s), iterate: s.iterate.bind(s), finalize: noop };
    },
    close: () => void db.close(),
  };
}

function noop(): void {}
