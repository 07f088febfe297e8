import type { SqliteConnection, SqliteStatement } from '../driver/driver.js';
import * as SQL from './sql.js';

/**
 * The side table of publish times (format reference §2.14), created with the first frame whose publish time differs
 * from its log time: a file whose publish times all equal their log times keeps VLink's tables alone.
 */
export class PublishTimeTable {
  private insert: SqliteStatement | undefined;
  private remover: SqliteStatement | undefined;
  /** Whether the table exists: false in a new file, unknown (undefined) after a rollback. */
  private exists: boolean | undefined = false;

  constructor(private readonly db: SqliteConnection) {}

  store(rowid: number | bigint, publish: number): void {
    if (this.insert === undefined) {
      this.db.exec(SQL.CREATE_PUBLISH_TIMES);
      this.insert = this.db.prepare(SQL.INSERT_PUBLISH_TIME);
      this.exists = true;
    }
    this.insert.run(rowid, Math.floor(publish));
  }

  /** Forgets the publish time of an evicted row. */
  remove(rowid: number): void {
    if (!(this.exists ??= this.probe())) return;
    (this.remover ??= this.db.prepare(SQL.DELETE_PUBLISH_TIME)).run(rowid);
  }

  /**
   * After a rollback: the table may have been created inside the rolled back transaction, so whether it exists is
   * found out again when next needed (the dropped statements are finalized when the connection closes).
   */
  rolledBack(): void {
    this.insert = undefined;
    this.remover = undefined;
    this.exists = undefined;
  }

  private probe(): boolean {
    const probe = this.db.prepare(SQL.HAS_PUBLISH_TABLE);
    try {
      return probe.get() !== undefined;
    } finally {
      probe.finalize();
    }
  }
}

/**
 * The recording's counters by cause, stored in the `VLinkBagCounters` table (vlink-bag, format reference §2.13). The
 * table is created only when there is something to store: a file without drops keeps VLink's tables alone.
 */
export class CounterTable {
  private counters: Record<string, Record<string, number>> | undefined;
  /** New counters not stored yet (also after a rollback lost the stored ones). */
  dirty = false;

  constructor(private readonly db: SqliteConnection) {}

  set(table: Record<string, Record<string, number>>): void {
    this.counters = table;
    this.dirty = true;
  }

  store(): void {
    const rows = Object.entries(this.counters ?? {}).flatMap(([url, causes]) =>
      Object.entries(causes).map(([cause, n]) => [url, cause, n] as const),
    );
    this.dirty = false;
    if (rows.length === 0) return;
    this.db.exec(SQL.CREATE_COUNTERS);
    const insert = this.db.prepare(SQL.INSERT_COUNTER);
    for (const [url, cause, n] of rows) insert.run(url, cause, n);
    insert.finalize();
  }

  /** Counters stored in a rolled back transaction are gone: store them again at the next refresh. */
  rolledBack(): void {
    this.dirty = this.counters !== undefined;
  }
}
