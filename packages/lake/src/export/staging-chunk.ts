import {
  type DuckDBAppender,
  DuckDBDataChunk,
  type DuckDBDoubleVector,
  type DuckDBType,
  type DuckDBUSmallIntVector,
  type DuckDBVarCharVector,
  type DuckDBVector,
} from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import type { TypedData } from './typed-data.js';

/** Rows of one data chunk: DuckDB's vector size. */
const CHUNK_ROWS = 2048;

/**
 * The staged rows of a url on their way into its staging table, a DuckDB data chunk of 2048 rows at a time
 * (`appendDataChunk`), instead of one appender call per value: the numbers go into the chunk's typed arrays in
 * JavaScript, the payloads are copied into the chunk as they come, and the JSON texts when the chunk is full. Columns, in
 * order: seq, log_us, pub_us (DOUBLE), kind (USMALLINT), payload (BLOB), data_json (VARCHAR) and, when the url's
 * `data` has a typed writer, data (its STRUCT).
 */
export class StagingChunk {
  private chunk!: DuckDBDataChunk;
  private seq!: DuckDBDoubleVector;
  private logUs!: DuckDBDoubleVector;
  private pubUs!: DuckDBDoubleVector;
  private kind!: DuckDBUSmallIntVector;
  /** The payload column's native vector: each payload is copied into it at once (see {@link add}). */
  private payload!: duckdb.Vector;
  private dataJson!: DuckDBVarCharVector;
  private data: DuckDBVector | undefined;
  private vectors: DuckDBVector[] = [];
  private rows = 0;

  constructor(
    private readonly types: readonly DuckDBType[],
    private readonly typed: TypedData | undefined,
  ) {
    this.fresh();
  }

  /**
   * Stages one row. `payload` is copied (a frame's data is valid only until the reader's next frame). `record` is
   * written into the typed `data` column when it fits; else `json(record)` gives the row's JSON text. Returns true when
   * the chunk is full (call {@link appendTo}).
   */
  add(
    seq: number,
    logUs: number,
    pubUs: number | undefined,
    kind: number,
    payload: Uint8Array,
    record: unknown,
    json: (record: unknown) => string,
  ): boolean {
    const row = this.rows++;
    this.seq.setItem(row, seq);
    this.logUs.setItem(row, logUs);
    this.pubUs.setItem(row, pubUs ?? null);
    this.kind.setItem(row, kind);
    // Copied into DuckDB now: a frame's data is valid only until the reader's next frame, and a JavaScript copy
    // kept until the chunk is full cost more (allocation and garbage collection) than all the rest of the row.
    duckdb.vector_assign_string_element_len(this.payload, row, payload);
    const data = this.data;
    if (data !== undefined && record !== undefined && this.typed!.write(data, row, record)) {
      this.dataJson.setItem(row, null);
    } else {
      if (data !== undefined) data.setItem(row, null);
      this.dataJson.setItem(row, record === undefined ? null : json(record));
    }
    return this.rows === CHUNK_ROWS;
  }

  /** Hands the staged rows to the appender and starts an empty chunk. */
  appendTo(appender: DuckDBAppender): void {
    if (this.rows === 0) return;
    for (const vector of this.vectors) vector.flush();
    this.chunk.rowCount = this.rows;
    appender.appendDataChunk(this.chunk);
    this.fresh();
  }

  /** Forgets the staged rows. */
  clear(): void {
    if (this.rows > 0) this.fresh();
  }

  private fresh(): void {
    // A new chunk each time: a reused one would keep the validity (NULL) bits and string caches of its last rows.
    this.chunk = DuckDBDataChunk.create(this.types, CHUNK_ROWS);
    const vector = (i: number) => this.chunk.getColumnVector(i);
    this.seq = vector(0) as DuckDBDoubleVector;
    this.logUs = vector(1) as DuckDBDoubleVector;
    this.pubUs = vector(2) as DuckDBDoubleVector;
    this.kind = vector(3) as DuckDBUSmallIntVector;
    this.payload = duckdb.data_chunk_get_vector(this.chunk.chunk, 4);
    this.dataJson = vector(5) as DuckDBVarCharVector;
    this.data = this.typed === undefined ? undefined : vector(6);
    // The JavaScript-side vectors: their values reach DuckDB when flushed (the payloads are there already).
    this.vectors = [this.seq, this.logUs, this.pubUs, this.kind, this.dataJson, ...(this.data ? [this.data] : [])];
    this.rows = 0;
  }
}
