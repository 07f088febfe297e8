import type {
  DuckDBBooleanVector,
  DuckDBDoubleVector,
  DuckDBStructVector,
  DuckDBVarCharVector,
  DuckDBVector,
} from '@duckdb/node-api';
import type { Structure } from './data-structure.js';

/**
 * Writes a decoded record straight into the `data` STRUCT vector of a staging data chunk, field by field, so the
 * usual message needs neither its JSON text (`JSON.stringify`, a string handed to DuckDB) nor DuckDB's
 * `json_transform` of it. It writes only what gives exactly the value `json_transform(recordJson(record), structure)`
 * gives: a finite number into a DOUBLE (−0 as 0, as JSON text has it), a safe-integer bigint as that number, a
 * non-finite number as NULL (JSON.stringify writes null), a string without NUL or surrogate code units into a
 * VARCHAR, a boolean into a BOOLEAN, an object into a STRUCT (its missing fields NULL), null or a missing field as
 * NULL. Anything else (a string where the first message had a number, an array, a 64-bit integer beyond 2^53 …)
 * makes `write` return false: the caller then sets the row's `data` NULL and stages its JSON text instead, which the
 * `COPY` converts with `json_transform` as before. Structures with lists or `JSON` leaves have no typed writer.
 */
export interface TypedData {
  /** The DuckDB type of the staging column: json_transform's result type for the structure. */
  readonly type: string;
  /** Bytes a row adds to the staged batch (its numbers and an estimate for its strings), for the memory bound. */
  readonly rowBytes: number;
  /** Writes `record` into row `row` of `vector`; false (the row may be half-written: set it NULL) when it cannot. */
  readonly write: (vector: DuckDBVector, row: number, record: unknown) => boolean;
}

/** Writes a value that is not null or undefined (`put` writes those); false when it cannot. */
type Writer = (vector: DuckDBVector, row: number, value: unknown) => boolean;

/** The typed writer of a structure, or undefined when it holds a list or a `JSON` leaf. */
export function typedData(structure: Structure): TypedData | undefined {
  const built = build(structure);
  if (!built) return undefined;
  const { write } = built;
  return {
    type: built.type,
    rowBytes: 16 + 8 * built.leaves,
    write: (vector, row, record) => put(write, vector, row, record),
  };
}

/** Writes `value` with `write`, but null or a missing field (at any level) is NULL whatever the column's type. */
function put(write: Writer, vector: DuckDBVector, row: number, value: unknown): boolean {
  if (value === null || value === undefined) {
    vector.setItem(row, null);
    return true;
  }
  return write(vector, row, value);
}

interface Built {
  type: string;
  leaves: number;
  write: Writer;
}

function build(structure: Structure): Built | undefined {
  if (structure === 'DOUBLE') return { type: 'DOUBLE', leaves: 1, write: writeDouble };
  if (structure === 'VARCHAR') return { type: 'VARCHAR', leaves: 1, write: writeVarchar };
  if (structure === 'BOOLEAN') return { type: 'BOOLEAN', leaves: 1, write: writeBoolean };
  if (typeof structure === 'string' || Array.isArray(structure)) return undefined;
  const names = Object.keys(structure);
  const fields: Built[] = [];
  for (const name of names) {
    const field = build(structure[name]!);
    if (field === undefined) return undefined;
    fields.push(field);
  }
  const writers = fields.map((field) => field.write);
  // A record without its own `__proto__` field would give Object.prototype for it (a STRUCT of NULLs where
  // json_transform gives NULL): that one name is read as an own property only, the others as they are (fast).
  const protoAt = names.indexOf('__proto__');
  const write: Writer = (vector, row, value) => {
    if (!isObject(value)) return false;
    const struct = vector as DuckDBStructVector;
    for (let i = 0; i < writers.length; i++) {
      const field = i === protoAt && !Object.hasOwn(value, '__proto__') ? undefined : value[names[i]!];
      if (!put(writers[i]!, struct.entryVectorAt(i), row, field)) return false;
    }
    return true;
  };
  return {
    type: `STRUCT(${names.map((name, i) => `"${name.replaceAll('"', '""')}" ${fields[i]!.type}`).join(', ')})`,
    leaves: fields.reduce((sum, field) => sum + field.leaves, 0),
    write,
  };
}

const writeDouble: Writer = (vector, row, value) => {
  const doubles = vector as DuckDBDoubleVector;
  if (typeof value === 'number') {
    // JSON text has no −0, NaN or ±Infinity: JSON.stringify writes 0 and null.
    doubles.setItem(row, Number.isFinite(value) ? (value === 0 ? 0 : value) : null);
    return true;
  }
  if (typeof value === 'bigint') {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) return false;
    doubles.setItem(row, n === 0 ? 0 : n);
    return true;
  }
  return false;
};

/**
 * Strings with NUL or surrogate code units take the JSON path: a lone surrogate has no UTF-8 form, and how the string
 * binding converts such text is not part of its contract (conservative: an emoji only costs the slower path).
 */
const UNSAFE_TEXT = /[\0\ud800-\udfff]/;

const writeVarchar: Writer = (vector, row, value) => {
  if (typeof value === 'string') {
    if (UNSAFE_TEXT.test(value)) return false;
    (vector as DuckDBVarCharVector).setItem(row, value);
    return true;
  }
  return false;
};

const writeBoolean: Writer = (vector, row, value) => {
  if (typeof value !== 'boolean') return false;
  (vector as DuckDBBooleanVector).setItem(row, value);
  return true;
};

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
