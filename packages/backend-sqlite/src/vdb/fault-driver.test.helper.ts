import type { SqliteConnection, SqliteDriver, SqliteStatement, SqlRow } from '../driver/driver.js';

/** Where a driver call fails; each is asked at the call and may change between calls (tests arm and disarm them). */
export interface Faults {
  open?: () => boolean;
  exec?: (sql: string) => boolean;
  prepare?: (sql: string) => boolean;
  run?: (sql: string) => boolean;
  /** Reading row `index` (0-based) of an iteration of `sql`. */
  row?: (sql: string, index: number) => boolean;
}

/** An error as a driver throws it: SQLITE_IOERR (10) unless said otherwise. */
export const ioError = (message = 'disk I/O error', errcode = 10) => Object.assign(new Error(message), { errcode });

/**
 * Wraps a real driver to make chosen calls fail like a failing disk would, and keeps every connection it opened, so
 * a test can look at what a writer's own connection holds (its file is locked while the writer has it open).
 */
export function faultyDriver(
  base: SqliteDriver,
  faults: Faults,
  error: () => Error = () => ioError(),
): { driver: SqliteDriver; connections: SqliteConnection[] } {
  const connections: SqliteConnection[] = [];
  const driver: SqliteDriver = {
    name: base.name,
    open(path, options) {
      if (faults.open?.()) throw error();
      const db = base.open(path, options);
      connections.push(db);
      return {
        driver: db.driver,
        defensive: db.defensive,
        exec(sql) {
          if (faults.exec?.(sql)) throw error();
          db.exec(sql);
        },
        prepare(sql): SqliteStatement {
          if (faults.prepare?.(sql)) throw error();
          const s = db.prepare(sql);
          return {
            run(...params) {
              if (faults.run?.(sql)) throw error();
              return s.run(...params);
            },
            get: (...params) => s.get(...params),
            all: (...params) => s.all(...params),
            iterate(...params) {
              const rows = s.iterate(...params);
              let index = 0;
              const wrapped: IterableIterator<SqlRow> = {
                next() {
                  if (faults.row?.(sql, index++)) throw error();
                  return rows.next();
                },
                return(value?: unknown) {
                  return rows.return?.(value) ?? { done: true, value: undefined };
                },
                [Symbol.iterator]() {
                  return wrapped;
                },
              };
              return wrapped;
            },
            finalize: () => s.finalize(),
          };
        },
        close: () => db.close(),
      };
    },
  };
  return { driver, connections };
}
