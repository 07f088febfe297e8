/**
 * What the query route needs of a lake, structurally, so this package does not import @vlink/bag-lake (and DuckDB)
 * unless a lake is served: `openLake` of @vlink/bag-lake fits. The route stops a query through `signal` (the client
 * went away, or the server's `timeoutMs` passed) and asks for at most `maxBytes` of rows as JSON: past them the lake
 * throws a BagError `LIMIT_REACHED`, which the client gets as 413 TOO_LARGE.
 */
export interface QueryableLake {
  query(
    sql: string,
    options: { limit?: number; timeoutMs?: number; signal?: AbortSignal; maxBytes?: number },
  ): Promise<{
    columns: readonly { name: string; type: string }[];
    rows: unknown[][];
    truncated: boolean;
  }>;
  close(): void;
}

export interface LakeServerOptions {
  /** Catalog folder (`bags.parquet`, `urls.parquet`): the views `bags` and `urls`. */
  catalog?: string;
  /** Export folder (`messages/url=…/date=…/*.parquet`): the view `messages`. */
  export?: string;
  /**
   * Opens the lake; default: `openLake` of @vlink/bag-lake, imported on the first query (install it beside the
   * server). Injecting it keeps DuckDB out of servers that serve no lake.
   */
  open?: (folders: { catalog?: string; export?: string }) => Promise<QueryableLake>;
  /** Rows an answer has when the request names no `limit` (default 1 000). */
  defaultRows?: number;
  /** The largest `limit` a request may ask (default 100 000). */
  maxRows?: number;
  /** A query is interrupted after this many ms (default 30 000): 503 TIMEOUT. */
  timeoutMs?: number;
  /** The largest JSON answer, bytes (default 32 MiB): 413 TOO_LARGE beyond it. */
  maxAnswerBytes?: number;
  /** Queries running at once (default 2); one more is refused with 503 QUEUE_FULL. */
  concurrency?: number;
  /** The longest SQL text, characters (default 100 000). */
  maxSqlLength?: number;
}

export const LAKE_DEFAULTS = {
  defaultRows: 1000,
  maxRows: 100_000,
  timeoutMs: 30_000,
  maxAnswerBytes: 32 * 1024 * 1024,
  concurrency: 2,
  maxSqlLength: 100_000,
} as const;
