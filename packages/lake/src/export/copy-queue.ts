import type { DuckDBConnection } from '@duckdb/node-api';

interface CopyTask {
  task: (copier: DuckDBConnection) => Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Runs the Parquet write-outs on their own connections (a connection runs one query at a time): in the order queued,
 * one at a time on one lane; with more lanes ({@link addLane}) as many at once. Tasks that must follow one another
 * (a url's write-outs and the DROP of its tables) are queued only once the earlier ones ended (UrlBatch).
 */
export class CopyQueue {
  private readonly waiting: CopyTask[] = [];
  private readonly idle: DuckDBConnection[];
  private readonly lanes: DuckDBConnection[];
  private running = 0;
  private drained: (() => void) | undefined;

  constructor(copier: DuckDBConnection) {
    this.idle = [copier];
    this.lanes = [copier];
  }

  run(task: (copier: DuckDBConnection) => Promise<void>): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ task, resolve, reject });
      this.pump();
    });
  }

  /**
   * Adds a connection that runs queued tasks alongside the others: for the write-outs left once the reading is over,
   * when the reader no longer needs its core (while it reads, a second DuckDB thread only contends with it).
   */
  addLane(copier: DuckDBConnection): void {
    this.lanes.push(copier);
    this.idle.push(copier);
    this.pump();
  }

  private pump(): void {
    while (this.idle.length > 0 && this.waiting.length > 0) {
      const copier = this.idle.shift()!;
      const { task, resolve, reject } = this.waiting.shift()!;
      this.running++;
      task(copier)
        .then(resolve, reject)
        .finally(() => {
          this.running--;
          this.idle.push(copier);
          this.pump();
        });
    }
    if (!this.busy) this.drained?.();
  }

  /**
   * True while tasks are queued or under way. Each step of a task (the next statement of a write-out, the next
   * write-out) starts only when the JavaScript thread handles the last one's completion: a long synchronous read
   * loop must let the event loop run now and then (see exportBag), or DuckDB sits idle until the loop ends.
   */
  get busy(): boolean {
    return this.running > 0 || this.waiting.length > 0;
  }

  /**
   * Closes the connections once every queued task has ended: a task still queued behind a failed one (the DROP after
   * a failed COPY) would otherwise run on a closed connection, which crashes the process inside DuckDB.
   */
  async close(): Promise<void> {
    if (this.busy) await new Promise<void>((resolve) => (this.drained = resolve));
    for (const copier of this.lanes) copier.closeSync();
  }
}
