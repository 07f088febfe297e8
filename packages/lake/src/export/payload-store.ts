import { BLOB, type DuckDBConnection, DuckDBDataChunk, type DuckDBScalarFunction } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import { registerRefFunction, uint32s } from './scalar-functions.js';

/**
 * Bytes of a block of staged payloads. Blocks are reused from store to store: a fresh block's pages are faulted in as
 * they are first written, which costs several times the copy itself (measured on Bun).
 */
const BLOCK_BYTES = 4 * 1024 * 1024;
/**
 * A payload larger than this goes into DuckDB at once, without a block: a call into DuckDB (and one to read where the
 * payload went) costs about what copying 10-20 KiB does (measured on Bun: the benchmark's 32 KiB images so, about
 * 4 % less of the JavaScript thread's time).
 */
const DIRECT_BYTES = 16 * 1024;
/** Rows of a DuckDB data chunk: its vector size. */
const CHUNK_ROWS = 2048;
/** Bytes of a `duckdb_string_t`, the C API's layout of a BLOB vector's row (see {@link PayloadStore.add}). */
const STRING_BYTES = 16;
/** The longest BLOB a `duckdb_string_t` holds inline, after its length. */
const INLINE_BYTES = 12;

/** The SQL function that gives a staged row's payload: `vlink_payload(store, payload_ref)` (a BLOB). */
export const PAYLOAD_FUNCTION = 'vlink_payload';

/**
 * The payloads of one staging table, copied out of the frames (whose data is valid only until the reader's next
 * frame) into DuckDB's memory, where they stay until the table is written out. Row `ref` is the `ref`-th payload
 * added. A payload is first copied into a block (a JavaScript copy costs much less than a call into DuckDB per
 * payload), and the block into DuckDB, as one BLOB, when it is full; the block is then reused.
 */
export class PayloadStore {
  rows = 0;
  /** Each row's `duckdb_string_t` (4 numbers; see {@link add}); until its block is in DuckDB, its offset in it. */
  private strings = new Uint32Array(4 * 1024);
  /** The block being filled, its bytes used, and the rows whose payloads it holds. */
  private block: Uint8Array | undefined;
  private used = 0;
  private readonly blockRows: number[] = [];
  /** The chunk whose BLOB vector holds the store's payloads in DuckDB's memory (its row 0 reassigned each time). */
  private held: DuckDBDataChunk | undefined;
  private heldVector: duckdb.Vector | undefined;
  private sealed = false;

  constructor(
    readonly id: number,
    private readonly source: PayloadSource,
  ) {}

  /**
   * Copies a payload in; returns its row (the staging row's `payload_ref`). The row's `duckdb_string_t` is, as the C
   * API lays it out: its length and, up to 12 bytes, the bytes themselves (zero-padded, as the rows' numbers start:
   * DuckDB compares inline strings as a whole); longer, its length, its first 4 bytes and a pointer to it
   * (little-endian, as on the platforms DuckDB's bindings are built for).
   */
  add(payload: Uint8Array): number {
    if (this.sealed) throw new Error('payloads added to a sealed store');
    const row = this.rows++;
    let strings = this.strings;
    if (strings.length < this.rows * 4) {
      strings = new Uint32Array(strings.length * 2);
      strings.set(this.strings);
      this.strings = strings;
    }
    const length = payload.byteLength;
    const s = row * 4;
    strings[s] = length;
    if (length <= INLINE_BYTES) {
      let word = 0;
      for (let k = 0; k < length; k++) {
        word |= payload[k]! << ((k & 3) * 8);
        if ((k & 3) === 3 || k === length - 1) {
          strings[s + 1 + (k >> 2)] = word;
          word = 0;
        }
      }
      return row;
    }
    strings[s + 1] = payload[0]! | (payload[1]! << 8) | (payload[2]! << 16) | (payload[3]! << 24);
    if (length > DIRECT_BYTES) {
      this.setPointer(row, this.hold(payload), 0);
      return row;
    }
    if (this.block === undefined || this.used + length > BLOCK_BYTES) {
      this.commit();
      this.block = this.source.block();
    }
    this.block.set(payload, this.used);
    strings[s + 2] = this.used;
    this.used += length;
    this.blockRows.push(row);
    return row;
  }

  /** Moves the last block into DuckDB: the store is complete, its {@link rowStrings} final. */
  seal(): void {
    if (this.sealed) return;
    this.commit();
    this.sealed = true;
  }

  /** The rows' `duckdb_string_t`s (4 numbers a row), once {@link seal}ed. */
  rowStrings(): Uint32Array {
    if (!this.sealed) throw new Error(`the staged payloads ${this.id} are not sealed`);
    return this.strings;
  }

  /** Lets go of the payloads (after the table's write-out, or when it is dropped); the store is empty. */
  release(): void {
    this.source.forget(this);
    if (this.held) this.source.reuseChunk(this.held);
    this.held = undefined;
    this.heldVector = undefined;
    if (this.block) this.source.reuse(this.block);
    this.block = undefined;
    this.used = 0;
    this.blockRows.length = 0;
    this.strings = new Uint32Array(0);
    this.rows = 0;
  }

  /** Copies the block being filled into DuckDB and points its rows there; the block goes back to the source. */
  private commit(): void {
    if (this.block === undefined) return;
    if (this.used > 0) {
      const address = this.hold(this.block.subarray(0, this.used));
      for (const row of this.blockRows) this.setPointer(row, address, this.strings[row * 4 + 2]!);
    }
    this.source.reuse(this.block);
    this.block = undefined;
    this.used = 0;
    this.blockRows.length = 0;
  }

  /** Copies bytes (more than 12) into the store's DuckDB memory; returns their address. */
  private hold(bytes: Uint8Array): number {
    if (this.heldVector === undefined) {
      this.held = this.source.chunk();
      this.heldVector = duckdb.data_chunk_get_vector(this.held.chunk, 0);
    }
    const vector = this.heldVector;
    duckdb.vector_assign_string_element_len(vector, 0, bytes);
    const string = uint32s(duckdb.vector_get_data(vector, STRING_BYTES), 4);
    return string[2]! + string[3]! * 2 ** 32;
  }

  private setPointer(row: number, address: number, offset: number): void {
    const pointer = address + offset;
    this.strings[row * 4 + 2] = pointer % 2 ** 32;
    this.strings[row * 4 + 3] = Math.floor(pointer / 2 ** 32);
  }
}

/**
 * The staged payloads of an export and the SQL function through which its write-outs read them.
 *
 * A payload used to be staged in the staging table itself: copied into a DuckDB data chunk, by the appender into its
 * own collection and by the appender's flush into the table, three copies of every payload byte on the JavaScript
 * thread, most into freshly faulted-in memory (measured on Bun with perf: a third of the thread's time in the export
 * of the benchmark's fleet was DuckDB's staging, half of that page faults). Now the JavaScript thread copies each
 * payload into a reused block and each full block into DuckDB's memory (4 MiB at a time, into memory freed by the
 * stores before), and the table holds the row's `payload_ref`. The write-out's `vlink_payload(store, ref)` is
 * evaluated by DuckDB on its thread, which calls back into JavaScript once per chunk of up to 2048 rows; the callback
 * copies the rows' `duckdb_string_t`s into the result, which DuckDB's Parquet writer reads (and copies) on its thread.
 *
 * The callback runs when the JavaScript thread turns its event loop: a reading loop lets it now and then (exportBag).
 */
export class PayloadSource {
  private readonly stores = new Map<number, PayloadStore>();
  private nextId = 0;
  private readonly freeBlocks: Uint8Array[] = [];
  private readonly freeChunks: DuckDBDataChunk[] = [];
  /** The rows' `duckdb_string_t`s of a callback, written into the result vector at once. */
  private result = new Uint32Array(4 * CHUNK_ROWS);
  /** The function, kept from the garbage collector while its database may call it. */
  private readonly functions: DuckDBScalarFunction[] = [];

  /** Registers {@link PAYLOAD_FUNCTION} in the database of `connection` (for all its connections). */
  register(connection: DuckDBConnection): void {
    this.functions.push(
      registerRefFunction(connection, PAYLOAD_FUNCTION, BLOB, (input, output) => this.fill(input, output)),
    );
  }

  /** A new, empty store. */
  store(): PayloadStore {
    const store = new PayloadStore(this.nextId++, this);
    this.stores.set(store.id, store);
    return store;
  }

  /** A block for a store: a reused one when there is one. */
  block(): Uint8Array {
    return this.freeBlocks.pop() ?? new Uint8Array(BLOCK_BYTES);
  }

  reuse(block: Uint8Array): void {
    this.freeBlocks.push(block);
  }

  /** An empty chunk to hold a store's blocks: a reused one when there is one. */
  chunk(): DuckDBDataChunk {
    return this.freeChunks.pop() ?? DuckDBDataChunk.create([BLOB], CHUNK_ROWS);
  }

  reuseChunk(chunk: DuckDBDataChunk): void {
    // Frees the blocks' memory on this thread, where the next stores' blocks take it again (DuckDB's allocator reuses
    // it; freed by DuckDB's thread instead, it was mostly faulted in anew: 200 MB a run of the benchmark, measured).
    chunk.reset();
    this.freeChunks.push(chunk);
  }

  /**
   * Lets go of everything the export staged, once its database is closed. The database keeps the registered function,
   * and through it this source, for as long as the runtime keeps the database's native handle (on Bun, past the
   * export: without this, each export held its free 4 MiB blocks, ~500 MiB after the lake's tests, measured).
   */
  close(): void {
    for (const store of this.stores.values()) store.release();
    this.stores.clear();
    this.freeBlocks.length = 0;
    this.freeChunks.length = 0;
    this.result = new Uint32Array(0);
  }

  forget(store: PayloadStore): void {
    this.stores.delete(store.id);
  }

  /** Sets each row of `output` to the payload its (store, ref) in `input` names. */
  private fill(input: duckdb.DataChunk, output: duckdb.Vector): void {
    const rows = duckdb.data_chunk_get_size(input);
    const ids = uint32s(duckdb.vector_get_data(duckdb.data_chunk_get_vector(input, 0), rows * 4), rows);
    const refs = uint32s(duckdb.vector_get_data(duckdb.data_chunk_get_vector(input, 1), rows * 4), rows);
    if (this.result.length < rows * 4) this.result = new Uint32Array(rows * 4);
    const result = this.result;
    let store: PayloadStore | undefined;
    let strings: Uint32Array = result;
    for (let row = 0; row < rows; row++) {
      if (store?.id !== ids[row]) {
        store = this.stores.get(ids[row]!);
        if (store === undefined) throw new Error(`the staged payloads ${ids[row]} are gone`);
        strings = store.rowStrings();
      }
      const ref = refs[row]!;
      if (ref >= store.rows) throw new Error(`no staged payload ${ref} in ${store.id}`);
      const from = ref * 4;
      const to = row * 4;
      result[to] = strings[from]!;
      result[to + 1] = strings[from + 1]!;
      result[to + 2] = strings[from + 2]!;
      result[to + 3] = strings[from + 3]!;
    }
    duckdb.copy_data_to_vector(output, 0, result.buffer as ArrayBuffer, 0, rows * STRING_BYTES);
  }
}
