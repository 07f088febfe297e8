/**
 * The `data` STRUCT of a url's exported messages: its DuckDB type, taken from the first decoded message of the url in
 * the bag (as packages/align/src/columns.ts takes its columns) and widened by the fields later messages add
 * (structure-fit.ts), written as a `json_transform` structure so DuckDB turns each message's JSON into the typed
 * STRUCT in C++ (one appended string per message instead of one JavaScript value object per field). Decoded numbers are JavaScript numbers, so every number is a DOUBLE (64-bit integers
 * beyond 2^53 arrive as decimal strings from the decoder and are converted by DuckDB; integers up to 2^53 stay exact);
 * nulls and empty arrays or objects of the first message are `JSON` (the value as JSON text). A message that is not
 * an object (a JSON number, a text) is wrapped as `{value: …}`, so `data` is a STRUCT for every url.
 */
export type Structure = string | Structure[] | { [field: string]: Structure };

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);

/** The decoded value as the row's `data`: objects as they are, anything else as `{value}`. */
export function asRecord(value: unknown): Record<string, unknown> {
  return isObject(value) ? value : { value };
}

/** The json_transform structure of a decoded message (after {@link asRecord}), or undefined when it has no fields. */
export function structureOf(record: Record<string, unknown>): Structure | undefined {
  const fields = fieldsOf(record);
  return fields === 'JSON' ? undefined : fields;
}

function fieldsOf(value: Record<string, unknown>): Structure {
  const keys = Object.keys(value);
  // DuckDB's STRUCT field names are case-insensitive: two keys equal but for case cannot be two fields.
  const lower = new Set(keys.map((k) => k.toLowerCase()));
  if (keys.length === 0 || lower.size !== keys.length || lower.has('')) return 'JSON';
  // Own data properties: `out[key] = …` with the key `__proto__` would set the object's prototype instead.
  return Object.fromEntries(keys.map((key) => [key, leafOf(value[key])]));
}

/** The structure of one value (a field's): DOUBLE, VARCHAR, BOOLEAN, a list, a nested object's fields, or JSON. */
export function leafOf(value: unknown): Structure {
  if (typeof value === 'number') return 'DOUBLE';
  if (typeof value === 'string') return 'VARCHAR';
  if (typeof value === 'boolean') return 'BOOLEAN';
  if (typeof value === 'bigint') return 'DOUBLE';
  if (Array.isArray(value)) {
    const first = value.find((item) => item !== null && item !== undefined);
    return first === undefined ? ['JSON'] : [leafOf(first)];
  }
  if (isObject(value)) return fieldsOf(value);
  return 'JSON';
}

/**
 * JSON text of a decoded record (bigints as numbers when safe, else decimal strings; typed arrays as arrays).
 * `plain` says the record came from `JSON.parse` (a JSON payload), so it holds neither: then no replacer is passed,
 * which gives the same text at several times the speed (V8 calls a replacer for every key and value).
 */
export function recordJson(record: Record<string, unknown>, plain = false): string {
  return plain ? JSON.stringify(record) : JSON.stringify(record, replacer);
}

/**
 * A lone UTF-16 surrogate as JSON.stringify writes it: `\udXXX` after an even run of backslashes (JSON.stringify
 * escapes only lone surrogates this way; a valid pair stays as its two raw code units).
 */
const LONE_SURROGATE_ESCAPE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

/**
 * The JSON text with each lone surrogate escape replaced by `\ufffd`, or undefined when it has none. JSON text may
 * escape a lone surrogate (`"\ud800"` parses), but no UTF-8 text, hence no Parquet string, can hold one, and DuckDB's
 * JSON reader rejects the whole text; the row's `payload` keeps the bytes as recorded, and the caller counts the row.
 */
export function withoutLoneSurrogates(text: string): string | undefined {
  if (!text.includes('\\ud')) return undefined;
  const replaced = text.replace(LONE_SURROGATE_ESCAPE, '$1\\ufffd');
  return replaced === text ? undefined : replaced;
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value.toString();
  }
  if (ArrayBuffer.isView(value) && !(value instanceof DataView))
    return Array.from(value as unknown as ArrayLike<number>);
  return value;
}
