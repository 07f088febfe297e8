import {
  type DuckDBAppender,
  DuckDBDataChunk,
  DuckDBStructType,
  type DuckDBType,
  type DuckDBVarCharVector,
  type DuckDBVector,
} from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import type { TypedData } from './typed-data.js';

/** Rows of one data chunk: DuckDB's vector size. */
const CHUNK_ROWS = 2048;

/**
 * The columns of a staging table, as {@link StagingChunk} fills them (a typed `data` STRUCT may follow). The payload
 * is not in the table: `payload_ref` is the row's payload in the batch's PayloadStore, which the write-out reads with
 * `vlink_payload` (payload-store.ts). `data_in_payload` says the row's `data` is its payload's own JSON text
 * (raw-json.ts), which the write-out converts with `json_transform`; `data_json` is the JSON text of a decoded record.
 */
export const STAGING_COLUMNS =
  'seq DOUBLE, log_us DOUBLE, pub_us DOUBLE, kind USMALLINT, payload_ref UINTEGER, data_json VARCHAR, data_in_payload BOOLEAN';

/**
 * Where `data` comes from for a staged row: nowhere (NULL), the decoded record (typed into `data` when it fits, else
 * its JSON text), or the payload, JSON text that `json_transform` converts as it is (raw-json.ts).
 */
export const DataSource = { None: 0, Record: 1, Payload: 2 } as const;
export type DataSource = (typeof DataSource)[keyof typeof DataSource];

/**
 * The staged rows of a url on their way into its staging table, a DuckDB data chunk of 2048 rows at a time
 * (`appendDataChunk`), instead of one appender call per value: the numbers go into typed arrays in JavaScript, copied
 * into the chunk with the JSON texts when it is full. Columns: {@link STAGING_COLUMNS} and, when the url's `data` has
 * a typed writer, data (its STRUCT).
 */
export class StagingChunk {
  /** One chunk for all the url's rows, reset after each append (its memory reused). */
  private readonly chunk: DuckDBDataChunk;
  /**
   * The number columns, written here and copied into the chunk when it is full (the bindings' views of a vector's
   * data are copies on Node, Bun and Deno, so they are not taken at all).
   */
  private readonly seq = new Float64Array(CHUNK_ROWS);
  private readonly logUs = new Float64Array(CHUNK_ROWS);
  private readonly pubUs = new Float64Array(CHUNK_ROWS);
  private readonly kind = new Uint16Array(CHUNK_ROWS);
  private readonly payloadRef = new Uint32Array(CHUNK_ROWS);
  /** DuckDB's BOOLEAN is one byte, 0 or 1. */
  private readonly dataInPayload = new Uint8Array(CHUNK_ROWS);
  private dataJson!: DuckDBVarCharVector;
  /**
   * node-api's writer of the typed `data` column, made for a chunk's first typed row: until then every row's `data`
   * is NULL, and a chunk without typed rows (JSON payloads staged as they are) gets its NULLs written at once rather
   * than row by row through node-api's validity upkeep (BigInt work, the largest cost on Bun's profile).
   */
  private data: DuckDBVector | undefined;
  private readonly dataType: DuckDBType | undefined;
  /** The NULLs of pub_us and data_json, set here rather than through node-api's per-row validity (BigInt work). */
  private readonly pubUsNulls = new NullBits();
  private readonly dataJsonNulls = new NullBits();
  private rows = 0;

  constructor(
    types: readonly DuckDBType[],
    private readonly typed: TypedData | undefined,
  ) {
    this.chunk = DuckDBDataChunk.create(types, CHUNK_ROWS);
    this.dataType = types[7];
    this.fresh();
  }

  /**
   * Stages one row; `payloadRef` is its payload's row in the batch's PayloadStore. With `source` Record, `record` is
   * written into the typed `data` column when it fits, else `json(record)` gives the row's JSON text. Returns true
   * when the chunk is full (call {@link appendTo}).
   */
  add(
    seq: number,
    logUs: number,
    pubUs: number | undefined,
    kind: number,
    payloadRef: number,
    source: DataSource,
    record: unknown,
    json: (record: unknown) => string,
  ): boolean {
    const row = this.rows++;
    this.seq[row] = seq;
    this.logUs[row] = logUs;
    if (pubUs === undefined) this.pubUsNulls.set(row);
    else this.pubUs[row] = pubUs;
    this.kind[row] = kind;
    this.payloadRef[row] = payloadRef;
    this.dataInPayload[row] = source === DataSource.Payload ? 1 : 0;
    if (
      source === DataSource.Record &&
      this.typed !== undefined &&
      this.typed.write(this.dataVector(row), row, record)
    ) {
      this.dataJsonNulls.set(row);
    } else {
      // `data` NULL: through node-api only once a typed row made it hold the chunk's `data` (see dataVector).
      this.data?.setItem(row, null);
      if (source === DataSource.Record) this.dataJson.setItem(row, json(record));
      else this.dataJsonNulls.set(row);
    }
    return this.rows === CHUNK_ROWS;
  }

  /** Hands the staged rows to the appender and starts an empty chunk. */
  appendTo(appender: DuckDBAppender): void {
    if (this.rows === 0) return;
    const numbers = [this.seq, this.logUs, this.pubUs, this.kind, this.payloadRef];
    for (const [i, items] of numbers.entries()) {
      const bytes = this.rows * items.BYTES_PER_ELEMENT;
      duckdb.copy_data_to_vector(this.native(i), 0, items.buffer as ArrayBuffer, items.byteOffset, bytes);
    }
    const flags = this.dataInPayload;
    duckdb.copy_data_to_vector(this.native(6), 0, flags.buffer as ArrayBuffer, flags.byteOffset, this.rows);
    this.dataJson.flush();
    if (this.data !== undefined) this.data.flush();
    else if (this.typed !== undefined) nullEverywhere(this.native(7), this.dataType!);
    this.pubUsNulls.writeTo(this.native(2));
    this.dataJsonNulls.writeTo(this.native(5));
    this.chunk.rowCount = this.rows;
    appender.appendDataChunk(this.chunk);
    this.fresh();
  }

  /** The `data` column's writer, made (with the rows before `row` set NULL) on the chunk's first typed row. */
  private dataVector(row: number): DuckDBVector {
    if (this.data !== undefined) return this.data;
    const data = this.chunk.getColumnVector(7);
    for (let before = 0; before < row; before++) data.setItem(before, null);
    this.data = data;
    return data;
  }

  private native(column: number): duckdb.Vector {
    return duckdb.data_chunk_get_vector(this.chunk.chunk, column);
  }

  /** Forgets the staged rows. */
  clear(): void {
    if (this.rows > 0) this.fresh();
  }

  /** Empties the chunk (its validity masks and string memory too). */
  private fresh(): void {
    this.chunk.reset();
    // Also drops node-api's vector wrappers, whose string caches and validity belong to the last rows.
    this.chunk.rowCount = CHUNK_ROWS;
    this.dataJson = this.chunk.getColumnVector(5) as DuckDBVarCharVector;
    this.data = undefined;
    this.pubUsNulls.clear();
    this.dataJsonNulls.clear();
    this.rows = 0;
  }
}

/** A validity mask with every row NULL. */
const NO_ROWS = new Uint8Array(CHUNK_ROWS / 8);

/** Sets every row of a vector NULL, and of its STRUCT children (DuckDB reads a NULL struct's children too). */
function nullEverywhere(vector: duckdb.Vector, type: DuckDBType): void {
  duckdb.vector_ensure_validity_writable(vector);
  duckdb.copy_data_to_vector_validity(vector, 0, NO_ROWS.buffer, 0, NO_ROWS.byteLength);
  if (type instanceof DuckDBStructType) {
    type.entryTypes.forEach((entry, i) => {
      nullEverywhere(duckdb.struct_vector_get_child(vector, i), entry);
    });
  }
}

/**
 * The NULL rows of a chunk column as DuckDB's validity mask (bit set = valid, bit `row % 64` of 64-bit word
 * `row / 64`, little-endian: the platforms DuckDB's bindings are built for), written into the vector at once.
 */
class NullBits {
  private readonly bits = new Uint8Array(CHUNK_ROWS / 8).fill(0xff);
  private any = false;

  set(row: number): void {
    this.bits[row >>> 3]! &= ~(1 << (row & 7));
    this.any = true;
  }

  writeTo(vector: duckdb.Vector): void {
    if (!this.any) return;
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, this.bits.buffer, 0, this.bits.byteLength);
  }

  clear(): void {
    if (this.any) this.bits.fill(0xff);
    this.any = false;
  }
}
