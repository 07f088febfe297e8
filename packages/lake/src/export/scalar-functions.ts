import { type DuckDBConnection, DuckDBScalarFunction, type DuckDBType, UINTEGER } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';

/**
 * Registers `name(UINTEGER, UINTEGER) → returns` in the database of `connection` (for all its connections): the form
 * of the export's staging functions, `vlink_payload(store, ref)` and `vlink_row(rows, ref)`. `fill` gets each call's
 * input chunk and result vector through the bindings' own callback (node-api's would wrap both in objects first); an
 * error it throws becomes the statement's error. Returns the function, which must be kept from the garbage collector
 * while the database may call it.
 */
export function registerRefFunction(
  connection: DuckDBConnection,
  name: string,
  returns: DuckDBType,
  fill: (input: duckdb.DataChunk, output: duckdb.Vector) => void,
): DuckDBScalarFunction {
  const wrapper = new DuckDBScalarFunction();
  const fn = wrapper.scalar_function;
  duckdb.scalar_function_set_name(fn, name);
  duckdb.scalar_function_add_parameter(fn, UINTEGER.toLogicalType().logical_type);
  duckdb.scalar_function_add_parameter(fn, UINTEGER.toLogicalType().logical_type);
  duckdb.scalar_function_set_return_type(fn, returns.toLogicalType().logical_type);
  duckdb.scalar_function_set_function(fn, (info, input, output) => {
    try {
      fill(input, output);
    } catch (error) {
      duckdb.scalar_function_set_error(info, error instanceof Error ? error.message : String(error));
    }
  });
  connection.registerScalarFunction(wrapper);
  return wrapper;
}

/** The first `count` 32-bit numbers of a vector's data (the bindings give a copy, aligned or not). */
export function uint32s(data: Uint8Array, count: number): Uint32Array {
  if (data.byteOffset % 4 === 0) return new Uint32Array(data.buffer, data.byteOffset, count);
  return new Uint32Array(data.slice(0, count * 4).buffer);
}
