import { DuckDBListVector, DuckDBMapVector, DuckDBStructVector, type DuckDBVector } from '@duckdb/node-api';
import { defineMember, type LakeValue, toLakeValue } from './values.js';

/** Thrown by `JsonMeter` once the answer is past its budget; the lake turns it into LIMIT_REACHED. */
export class OverBudget extends Error {
  constructor(readonly maxBytes: number) {
    super(`over ${maxBytes} bytes`);
  }
}

/**
 * Counts the UTF-8 bytes of the answer's JSON as its values are made, and stops the answer (`OverBudget`) as soon as
 * they pass `maxBytes`: one huge row or value must not be turned into JS strings in full (hundreds of MB each) before
 * anything measures it.
 */
export class JsonMeter {
  used = 0;

  constructor(readonly maxBytes: number) {}

  add(bytes: number): void {
    this.used += bytes;
    if (this.used > this.maxBytes) throw new OverBudget(this.maxBytes);
  }

  /** Bytes left before the budget is passed. */
  get room(): number {
    return this.maxBytes - this.used;
  }
}

/**
 * The value at `row` of a column vector, metered as it is made. Lists, structs and maps are walked member by member
 * (each LIST row is a slice of one child vector, so nothing is made before it is counted): `list(payload)` over a
 * whole export is one value. Other values are made whole, then counted (a fixed-size ARRAY holds at most its
 * type's length of items).
 */
export function cellOf(vector: DuckDBVector, row: number, meter: JsonMeter): LakeValue {
  if (vector instanceof DuckDBListVector) {
    const items = vector.getItemVector(row);
    return items === null ? leaf(null, meter) : listOf(items, meter);
  }
  if (vector instanceof DuckDBStructVector) {
    if (!vector.isItemValid(row)) return leaf(null, meter);
    const names = vector.type.entryNames;
    meter.add(2 + Math.max(0, names.length - 1));
    const out: { [key: string]: LakeValue } = {};
    for (let i = 0; i < names.length; i++) {
      const name = names[i]!;
      meter.add(stringBytes(name, meter.room) + 1);
      defineMember(out, name, cellOf(vector.entryVectorAt(i), row, meter));
    }
    return out;
  }
  if (vector instanceof DuckDBMapVector) {
    // a MAP is a LIST of STRUCT(key, value) underneath; node-api keeps that list private and makes whole maps only
    const list = (vector as unknown as { listVector?: unknown }).listVector;
    if (list instanceof DuckDBListVector) {
      const entries = list.getItemVector(row);
      if (entries === null) return leaf(null, meter);
      if (entries instanceof DuckDBStructVector) return mapOf(entries, meter);
    }
  }
  return leaf(toLakeValue(vector.getItem(row)), meter);
}

function listOf(items: DuckDBVector, meter: JsonMeter): LakeValue[] {
  const count = items.itemCount;
  meter.add(2 + Math.max(0, count - 1));
  const out: LakeValue[] = [];
  for (let i = 0; i < count; i++) out.push(cellOf(items, i, meter));
  return out;
}

/** All-string keys make an object (as an empty map does), other keys `[{key, value}]`: what `toLakeValue` gives. */
function mapOf(entries: DuckDBStructVector, meter: JsonMeter): LakeValue {
  const count = entries.itemCount;
  const keyVector = entries.entryVectorAt(0);
  const values = entries.entryVectorAt(1);
  const keys: LakeValue[] = [];
  for (let i = 0; i < count; i++) keys.push(cellOf(keyVector, i, meter));
  const named = keys.every((key) => typeof key === 'string');
  // brackets, commas, and per entry the `:` of a member or the frame of `{"key":…,"value":…}`
  meter.add(2 + Math.max(0, count - 1) + count * (named ? 1 : '{"key":,"value":}'.length));
  if (named) {
    const out: { [key: string]: LakeValue } = {};
    for (let i = 0; i < count; i++) defineMember(out, keys[i] as string, cellOf(values, i, meter));
    return out;
  }
  return keys.map((key, i) => ({ key, value: cellOf(values, i, meter) }));
}

function leaf(value: LakeValue, meter: JsonMeter): LakeValue {
  meter.add(jsonBytes(value, meter.room));
  return value;
}

/** The UTF-8 bytes of `JSON.stringify(value)`, or any number over `room` once it is known to be over. */
export function jsonBytes(value: LakeValue, room: number): number {
  if (value === null) return 4;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (typeof value === 'number') return String(value).length;
  if (typeof value === 'string') return stringBytes(value, room);
  let total = 2;
  const members = Array.isArray(value) ? value : Object.entries(value);
  total += Math.max(0, members.length - 1);
  for (const member of members) {
    if (total > room) return total;
    if (Array.isArray(value)) total += jsonBytes(member as LakeValue, room - total);
    else {
      const [key, item] = member as [string, LakeValue];
      total += stringBytes(key, room - total) + 1;
      total += jsonBytes(item, room - total);
    }
  }
  return total;
}

/**
 * The UTF-8 bytes of a string as JSON writes it: quotes, two-byte escapes (`\"`, `\\`, `\n` …), `\u00XX` for other
 * control characters and lone surrogates. A string longer than `room` is over without being scanned (each character
 * is at least one byte).
 */
export function stringBytes(text: string, room: number): number {
  const length = text.length;
  if (length + 2 > room) return length + 2;
  let bytes = 2;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) {
      if (c === 0x22 || c === 0x5c || c === 8 || c === 9 || c === 10 || c === 12 || c === 13) bytes += 2;
      else bytes += c < 0x20 ? 6 : 1;
    } else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < length && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i++;
    } else bytes += c >= 0xd800 && c < 0xe000 ? 6 : 3;
  }
  return bytes;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c < 0xe000;
}
