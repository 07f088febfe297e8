import {
  BLOB,
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  type DuckDBScalarFunction,
  STRUCT,
  USMALLINT,
  VARCHAR,
} from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import type { PayloadSource, PayloadStore } from './payload-store.js';
import { registerRefFunction, uint32s } from './scalar-functions.js';

/** The SQL function that gives a row of a {@link StagedRows}: `vlink_row(rows, ref)`, a STRUCT of its columns. */
export const ROW_FUNCTION = 'vlink_row';
/** Rows of a DuckDB data chunk: its vector size. */
const CHUNK_ROWS = 2048;
/** Bytes of a `duckdb_string_t` (payload-store.ts). */
const STRING_BYTES = 16;
/** Row flags: the row's `data` is its payload's JSON text; it has no publish time. */
const DATA_IN_PAYLOAD = 1;
const NO_PUBLISH = 2;

/**
 * The staging columns of {@link STAGING_COLUMNS} (staging-chunk.ts), `payload_bytes` for `payload_ref`, of a
 * {@link StagedRows}: what a write-out selects from, as from a staging table.
 */
export function stagedRowsSql(rows: StagedRows): string {
  const fields = ['seq', 'log_us', 'pub_us', 'kind', 'data_json', 'data_in_payload'].map((f) => `r.${f} AS ${f}`);
  return (
    `(SELECT r.payload AS payload_bytes, ${fields.join(', ')} ` +
    `FROM (SELECT ${ROW_FUNCTION}(${rows.id}::UINTEGER, range::UINTEGER) AS r FROM range(${rows.rows})))`
  );
}

/**
 * The staged messages of a url's batch whose `data` has no typed writer (JSON payloads that are their own `data`, raw
 * payloads, records staged as JSON text): kept here, in JavaScript and in DuckDB memory the rows' payloads and texts
 * are copied into (payload-store.ts), instead of in a staging table. The write-out reads them through
 * `vlink_row(rows, ref)`, one call back into JavaScript per chunk of up to 2048 rows: its numbers are copied into the
 * result's vectors, its payload and text as `duckdb_string_t`s. The appender cost more: its copy of each row into its
 * collection and into the table were a tenth of the JavaScript thread's time in the export of the benchmark's fleet
 * (measured on Bun).
 */
export class StagedRows {
  rows = 0;
  private seq = new Float64Array(1024);
  private logUs = new Float64Array(1024);
  private pubUs = new Float64Array(1024);
  private kind = new Uint16Array(1024);
  private flags = new Uint8Array(1024);
  /** The row's JSON text in {@link texts}, or -1. */
  private text = new Int32Array(1024);
  private sealed = false;

  constructor(
    readonly id: number,
    private readonly payloads: PayloadStore,
    private readonly texts: PayloadStore,
    private readonly set: StagedRowsSet,
  ) {}

  /** Stages a row; `payload` and `text` (the UTF-8 JSON text of its record, if any) are copied. */
  add(
    seq: number,
    logUs: number,
    pubUs: number | undefined,
    kind: number,
    payload: Uint8Array,
    dataInPayload: boolean,
    text: Uint8Array | undefined,
  ): void {
    if (this.sealed) throw new Error('rows added to sealed staged rows');
    const row = this.rows++;
    if (row === this.seq.length) this.grow();
    this.seq[row] = seq;
    this.logUs[row] = logUs;
    this.pubUs[row] = pubUs ?? 0;
    this.kind[row] = kind;
    this.flags[row] = (dataInPayload ? DATA_IN_PAYLOAD : 0) | (pubUs === undefined ? NO_PUBLISH : 0);
    this.payloads.add(payload);
    this.text[row] = text === undefined ? -1 : this.texts.add(text);
  }

  /** Moves the last payloads and texts into DuckDB: the rows are complete. */
  seal(): void {
    this.payloads.seal();
    this.texts.seal();
    this.sealed = true;
  }

  /** Lets go of the rows (after their write-out, or when they are dropped). */
  release(): void {
    this.set.forget(this);
    this.payloads.release();
    this.texts.release();
    this.rows = 0;
  }

  /** Sets rows `0…count` of the STRUCT vector `output` to the rows `refs` name. */
  fill(refs: Uint32Array, count: number, output: duckdb.Vector, scratch: Scratch): void {
    if (!this.sealed) throw new Error(`the staged rows ${this.id} are not sealed`);
    const payloads = this.payloads.rowStrings();
    const texts = this.texts.rowStrings();
    const { doubles, kinds, flags, strings, valid } = scratch.ensure(count);
    const words = Math.ceil(count / 64) * 8;
    valid.fill(0xff, 0, words * 2);
    for (let r = 0; r < count; r++) {
      const ref = refs[r]!;
      if (ref >= this.rows) throw new Error(`no staged row ${ref} in ${this.id}`);
      doubles[r] = this.seq[ref]!;
      doubles[CHUNK_ROWS + r] = this.logUs[ref]!;
      doubles[2 * CHUNK_ROWS + r] = this.pubUs[ref]!;
      kinds[r] = this.kind[ref]!;
      const flag = this.flags[ref]!;
      flags[r] = flag & DATA_IN_PAYLOAD;
      if (flag & NO_PUBLISH) valid[r >>> 3]! &= ~(1 << (r & 7));
      const s = r * 4;
      for (let k = 0; k < 4; k++) strings[s + k] = payloads[ref * 4 + k]!;
      const text = this.text[ref]!;
      const t = (CHUNK_ROWS + r) * 4;
      if (text < 0) {
        valid[words + (r >>> 3)]! &= ~(1 << (r & 7));
        for (let k = 0; k < 4; k++) strings[t + k] = 0;
      } else for (let k = 0; k < 4; k++) strings[t + k] = texts[text * 4 + k]!;
    }
    const child = (i: number) => duckdb.struct_vector_get_child(output, i);
    const copy = (i: number, data: ArrayBufferView, from: number, bytes: number) =>
      duckdb.copy_data_to_vector(child(i), 0, data.buffer as ArrayBuffer, data.byteOffset + from, bytes);
    copy(0, strings, 0, count * STRING_BYTES);
    copy(1, doubles, 0, count * 8);
    copy(2, doubles, CHUNK_ROWS * 8, count * 8);
    copy(3, doubles, 2 * CHUNK_ROWS * 8, count * 8);
    copy(4, kinds, 0, count * 2);
    copy(5, flags, 0, count);
    copy(6, strings, CHUNK_ROWS * STRING_BYTES, count * STRING_BYTES);
    // Written every time: the result vector may keep the validity of the last chunk.
    for (const [i, from] of [
      [3, 0],
      [6, words],
    ] as const) {
      const vector = child(i);
      duckdb.vector_ensure_validity_writable(vector);
      duckdb.copy_data_to_vector_validity(vector, 0, valid.buffer as ArrayBuffer, valid.byteOffset + from, words);
    }
  }

  private grow(): void {
    const size = this.seq.length * 2;
    const grown = <T extends Float64Array | Uint16Array | Uint8Array | Int32Array>(old: T, make: (n: number) => T) => {
      const array = make(size);
      array.set(old as never);
      return array;
    };
    this.seq = grown(this.seq, (n) => new Float64Array(n));
    this.logUs = grown(this.logUs, (n) => new Float64Array(n));
    this.pubUs = grown(this.pubUs, (n) => new Float64Array(n));
    this.kind = grown(this.kind, (n) => new Uint16Array(n));
    this.flags = grown(this.flags, (n) => new Uint8Array(n));
    this.text = grown(this.text, (n) => new Int32Array(n));
  }
}

/** The arrays a callback gathers a chunk's columns in (the rows up to 2048 of each). */
class Scratch {
  doubles = new Float64Array(3 * CHUNK_ROWS);
  kinds = new Uint16Array(CHUNK_ROWS);
  flags = new Uint8Array(CHUNK_ROWS);
  /** Payloads' then texts' `duckdb_string_t`s. */
  strings = new Uint32Array(2 * 4 * CHUNK_ROWS);
  /** The validity masks of pub_us then data_json (DuckDB's: bit set = valid, 64-bit words, little-endian). */
  valid = new Uint8Array(2 * (CHUNK_ROWS / 8));

  ensure(count: number): this {
    if (count > CHUNK_ROWS) throw new Error(`a chunk of ${count} rows`);
    return this;
  }
}

/** The {@link StagedRows} of an export, and the SQL function through which its write-outs read them. */
export class StagedRowsSet {
  private readonly sets = new Map<number, StagedRows>();
  private nextId = 0;
  private readonly scratch = new Scratch();
  /** The function, kept from the garbage collector while its database may call it. */
  private readonly functions: DuckDBScalarFunction[] = [];

  constructor(private readonly source: PayloadSource) {}

  /** Registers {@link ROW_FUNCTION} in the database of `connection` (for all its connections). */
  register(connection: DuckDBConnection): void {
    const type = STRUCT({
      payload: BLOB,
      seq: DOUBLE,
      log_us: DOUBLE,
      pub_us: DOUBLE,
      kind: USMALLINT,
      data_in_payload: BOOLEAN,
      data_json: VARCHAR,
    });
    this.functions.push(
      registerRefFunction(connection, ROW_FUNCTION, type, (input, output) => this.fill(input, output)),
    );
  }

  /** New, empty staged rows. */
  rows(): StagedRows {
    const rows = new StagedRows(this.nextId++, this.source.store(), this.source.store(), this);
    this.sets.set(rows.id, rows);
    return rows;
  }

  forget(rows: StagedRows): void {
    this.sets.delete(rows.id);
  }

  /** Lets go of every staged row (see {@link PayloadSource.close}), once the export's database is closed. */
  close(): void {
    for (const rows of [...this.sets.values()]) rows.release();
    this.sets.clear();
  }

  private fill(input: duckdb.DataChunk, output: duckdb.Vector): void {
    const count = duckdb.data_chunk_get_size(input);
    if (count === 0) return;
    const ids = uint32s(duckdb.vector_get_data(duckdb.data_chunk_get_vector(input, 0), count * 4), count);
    const refs = uint32s(duckdb.vector_get_data(duckdb.data_chunk_get_vector(input, 1), count * 4), count);
    // One write-out reads one set: its id is the same on every row.
    for (let r = 1; r < count; r++) if (ids[r] !== ids[0]) throw new Error('staged rows of two sets in one chunk');
    const rows = this.sets.get(ids[0]!);
    if (rows === undefined) throw new Error(`the staged rows ${ids[0]} are gone`);
    rows.fill(refs, count, output, this.scratch);
  }
}
