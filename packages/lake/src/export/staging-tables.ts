import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Tables of a layout made ahead: as many as were taken so far (a bag's worth, once a bag was read: the next bag's
 * batches take theirs at its start, at once), at least 2 and at most this.
 */
const MAX_SPARE = 32;

/** Unique per process: the batches of the previous bag may still be written out while this bag's are filled. */
let stagingTables = 0;

/**
 * Makes the export's staging tables, on a connection of their own, ahead of need. The tables of a url's batch are
 * taken when its first message is read, and a `CREATE TABLE` then waited for a thread of the runtime's pool while the
 * write-outs held both (their payloads come from the reading thread, payload-store.ts, so a write-out holds its
 * thread until the reader turns its event loop): measured on Bun, the benchmark's fleet, the reader waited 180-210 ms
 * a run; with the tables made ahead, 5-10 ms. A batch still drops its tables once written out (a truncated table
 * keeps its memory for a while, measured).
 */
export class StagingTables {
  /** The tables made (or being made) and not yet taken, and how many were taken, by their columns. */
  private readonly ready = new Map<string, { tables: Promise<string>[]; taken: number }>();
  /** The last `CREATE TABLE` queued: they run one after another on the connection. */
  private last: Promise<unknown> = Promise.resolve();

  constructor(private readonly connection: DuckDBConnection) {}

  /** Two empty tables with these columns (a staging table's definition); more are made for the next batches. */
  async take(columns: string): Promise<[string, string]> {
    let ready = this.ready.get(columns);
    if (ready === undefined) {
      ready = { tables: [], taken: 0 };
      this.ready.set(columns, ready);
    }
    const { tables } = ready;
    while (tables.length < 2) tables.push(this.create(columns));
    const taken = tables.splice(0, 2);
    ready.taken += 2;
    const spare = Math.min(MAX_SPARE, Math.max(2, ready.taken));
    while (tables.length < spare) tables.push(this.create(columns));
    return [await taken[0]!, await taken[1]!];
  }

  /** Closes the connection once the tables being made are (never under a query: that crashes inside DuckDB). */
  async close(): Promise<void> {
    await this.last.catch(() => undefined);
    this.connection.closeSync();
  }

  private create(columns: string): Promise<string> {
    const name = `staged_${stagingTables++}`;
    const made = this.last.then(() => this.connection.run(`CREATE TABLE ${name} (${columns})`)).then(() => name);
    this.last = made;
    // Seen when taken; one made ahead and never taken must not be an unhandled rejection.
    made.catch(() => undefined);
    return made;
  }
}
