import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { BagError } from '@vlink/bag-core';
import { cellOf, JsonMeter, OverBudget } from './cells.js';
import { type LockedInstance, openLockedInstance, prepareRead } from './lock-down.js';
import type { LakeValue } from './values.js';
import { catalogViews, exportViews, LAKE_VIEWS, type LakeView, type LakeViewName, sqlString } from './views.js';

export interface OpenLakeOptions {
  /** A catalog folder (`bags.parquet`, `urls.parquet`): the views `bags` and `urls`. */
  catalog?: string;
  /** An export folder (`messages/url=…/date=…/*.parquet`): the view `messages`. */
  export?: string;
  /** Files `writeParquet` may write; DuckDB may write nothing else. */
  outputFiles?: readonly string[];
  /** DuckDB's memory_limit (default `2GB`): a query needing more fails instead of swapping the machine. */
  memoryLimit?: string;
  /** DuckDB's worker threads (default: DuckDB's, one per core). */
  threads?: number;
}

export interface LakeQueryOptions {
  /** At most this many rows are kept; the answer says `truncated` when there were more. Default: all. */
  limit?: number;
  /** The statement is interrupted after this many ms (LIMIT_REACHED). Default: none. */
  timeoutMs?: number;
  /** Interrupts the statement (ABORTED). */
  signal?: AbortSignal;
  /**
   * The kept rows, as JSON (`JSON.stringify(rows)`, UTF-8), stay within this many bytes: the query stops with
   * LIMIT_REACHED as soon as a value passes it, before the rest is made. Default: no limit.
   */
  maxBytes?: number;
}

export interface LakeColumnInfo {
  readonly name: string;
  /** DuckDB's type, as DuckDB writes it (`BIGINT`, `TIMESTAMP`, `STRUCT(x DOUBLE)` …). */
  readonly type: string;
}

export interface LakeResult {
  readonly columns: readonly LakeColumnInfo[];
  /** One array per row, in column order (names may repeat, so not objects); values are JSON-safe (values.ts). */
  readonly rows: LakeValue[][];
  /** More rows than `limit` were produced and left out. */
  readonly truncated: boolean;
}

/** How often a stopped query's connection is interrupted again (an interrupt between two steps is lost). */
const INTERRUPT_REPEAT_MS = 20;

/**
 * DuckDB in-process over a catalog and an export, locked down (lock-down.ts): only reads run (a SELECT, or a plain
 * EXPLAIN of one), the views live in a read-only database, DuckDB may read only the lake's files, write only
 * `outputFiles`, load no extension, and no statement can change that. Each query runs on a connection of its own, on
 * DuckDB's threads (the event loop only converts the kept rows), so queries may run side by side and each can be
 * interrupted.
 */
export class Lake {
  private closed = false;
  private readonly instance: DuckDBInstance;

  private constructor(
    private readonly locked: LockedInstance,
    /** The views this lake has. */
    readonly views: readonly LakeViewName[],
    private readonly outputFiles: ReadonlySet<string>,
  ) {
    this.instance = locked.instance;
  }

  static async open(options: OpenLakeOptions = {}): Promise<Lake> {
    const views: LakeView[] = [
      ...(options.catalog === undefined ? [] : catalogViews(options.catalog)),
      ...(options.export === undefined ? [] : exportViews(options.export)),
    ];
    const locked = await openLockedInstance(views, {
      outputFiles: options.outputFiles ?? [],
      memoryLimit: options.memoryLimit ?? '2GB',
      ...(options.threads === undefined ? {} : { threads: options.threads }),
    });
    return new Lake(
      locked,
      views.map((view) => view.name),
      new Set(options.outputFiles ?? []),
    );
  }

  /** Runs one SELECT (or EXPLAIN) and keeps its first `limit` rows (within `maxBytes` of JSON). */
  async query(sql: string, options: LakeQueryOptions = {}): Promise<LakeResult> {
    const limit = options.limit ?? Number.POSITIVE_INFINITY;
    if (!(limit >= 0)) throw new BagError('INVALID_ARGUMENT', `limit must be ≥ 0, not ${options.limit}`);
    const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
    if (!(maxBytes > 0)) throw new BagError('INVALID_ARGUMENT', `maxBytes must be > 0, not ${options.maxBytes}`);
    return this.withConnection(options, async (connection) => {
      const statement = await prepareRead(connection, sql, { explain: true });
      const result = await statement.stream();
      const names = result.columnNames();
      const types = result.columnTypes();
      const columns = names.map((name, i) => ({ name, type: String(types[i]) }));
      const rows: LakeValue[][] = [];
      const meter = new JsonMeter(maxBytes);
      let truncated = false;
      try {
        meter.add(2); // the rows' brackets
        for (;;) {
          const chunk = await result.fetchChunk();
          if (chunk === null || chunk.rowCount === 0) break;
          const take = Math.min(chunk.rowCount, limit - rows.length);
          if (take < chunk.rowCount) truncated = true;
          const vectors = columns.map((_, c) => chunk.getColumnVector(c));
          for (let r = 0; r < take; r++) {
            // brackets and commas of the row, and the comma before it
            meter.add(2 + Math.max(0, vectors.length - 1) + (rows.length > 0 ? 1 : 0));
            rows.push(vectors.map((vector) => cellOf(vector, r, meter)));
          }
          if (truncated) break;
          if (rows.length >= limit) {
            // exactly `limit` so far: one more chunk says whether anything was left out
            const next = await result.fetchChunk();
            truncated = next !== null && next.rowCount > 0;
            break;
          }
        }
      } catch (error) {
        if (!(error instanceof OverBudget)) throw error;
        throw new BagError(
          'LIMIT_REACHED',
          `the answer is over ${maxBytes} bytes of JSON (at row ${rows.length + 1}): ask fewer rows or columns`,
        );
      }
      return { columns, rows, truncated };
    });
  }

  /** Writes the answer of one SELECT to a Parquet file named in `outputFiles` (DuckDB's COPY … TO). */
  async writeParquet(
    sql: string,
    file: string,
    options: Omit<LakeQueryOptions, 'limit' | 'maxBytes'> = {},
  ): Promise<number> {
    if (!this.outputFiles.has(file)) {
      throw new BagError(
        'INVALID_ARGUMENT',
        `${file} is not one of the lake's output files (open it with outputFiles)`,
      );
    }
    return this.withConnection(options, async (connection) => {
      // the SQL must be one read on its own before it is wrapped, so it cannot close the parenthesis and add options
      await prepareRead(connection, sql, { explain: false });
      const copied = await connection.run(`COPY (${sql}) TO ${sqlString(file)} (FORMAT parquet)`);
      return Number(copied.rowsChanged);
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.locked.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  private async withConnection<T>(
    options: Omit<LakeQueryOptions, 'limit'>,
    body: (connection: DuckDBConnection) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw new BagError('CLOSED', 'the lake is closed');
    const { timeoutMs, signal } = options;
    if (timeoutMs !== undefined && !(timeoutMs > 0)) {
      throw new BagError('INVALID_ARGUMENT', `timeoutMs must be > 0, not ${timeoutMs}`);
    }
    if (signal?.aborted) throw new BagError('ABORTED', 'the query was aborted before it started');
    const connection = await this.instance.connect();
    let timedOut = false;
    // DuckDB's interrupt stops the statement running now; one that arrives between two steps (parsing, preparing,
    // starting the stream) is lost, so once stopped the connection is interrupted again until the body gives up.
    let repeat: ReturnType<typeof setInterval> | undefined;
    const stop = () => {
      connection.interrupt();
      repeat ??= setInterval(() => connection.interrupt(), INTERRUPT_REPEAT_MS);
    };
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            stop();
          }, timeoutMs);
    signal?.addEventListener('abort', stop, { once: true });
    try {
      const answer = await body(connection);
      // stopped after DuckDB had finished: the answer is complete, but the caller asked for an error
      if (timedOut || signal?.aborted) throw new Error('interrupted');
      return answer;
    } catch (error) {
      if (timedOut) throw new BagError('LIMIT_REACHED', `the query ran past its ${timeoutMs} ms timeout`);
      if (signal?.aborted) throw new BagError('ABORTED', 'the query was aborted');
      throw this.queryError(error);
    } finally {
      clearTimeout(timer);
      clearInterval(repeat);
      signal?.removeEventListener('abort', stop);
      connection.closeSync();
    }
  }

  /** DuckDB's message, as a QUERY_ERROR; a view this lake lacks is named with the folder that would give it. */
  private queryError(error: unknown): BagError {
    if (BagError.isInstance(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    const missing = /Table with name (\w+) does not exist/i.exec(message)?.[1]?.toLowerCase();
    if (missing !== undefined && missing in LAKE_VIEWS && !this.views.includes(missing as LakeViewName)) {
      const folder = LAKE_VIEWS[missing as LakeViewName];
      return new BagError(
        'QUERY_ERROR',
        `no view ${missing}: the lake was opened without a${folder === 'export' ? 'n' : ''} ${folder} folder (--${folder} <dir>)`,
        { cause: error },
      );
    }
    return new BagError('QUERY_ERROR', message, { cause: error });
  }
}

export const openLake = (options?: OpenLakeOptions): Promise<Lake> => Lake.open(options);

/** Opens a lake, runs one query, closes it: for one answer (a CLI call). */
export async function queryLake(sql: string, options: OpenLakeOptions & LakeQueryOptions = {}): Promise<LakeResult> {
  const lake = await openLake(options);
  try {
    return await lake.query(sql, options);
  } finally {
    lake.close();
  }
}
