import {
  DuckDBArrayValue,
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBListValue,
  DuckDBMapValue,
  DuckDBStructValue,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBValue,
} from '@duckdb/node-api';

/** A value as JSON carries it: what query answers hold, so they print, serialize and cross HTTP unchanged. */
export type LakeValue = null | boolean | number | string | LakeValue[] | { [key: string]: LakeValue };

/**
 * DuckDB's value → JSON-safe value. BIGINTs become numbers when exact (counts, µs durations within 2^53) and decimal
 * strings otherwise, so no precision is lost silently; timestamps become ISO 8601 UTC with all their digits (µs, ns
 * for TIMESTAMP_NS; a JS Date would drop them and fails past ±275 760 years), ±infinity as `infinity` /
 * `-infinity`; BLOBs become base64; structs objects, lists arrays, maps objects (string keys) or `[{key, value}]`.
 */
export function toLakeValue(value: DuckDBValue): LakeValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return exactNumber(value);
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) {
    return value.isFinite ? isoFromMicros(value.micros) : infinity(value.micros);
  }
  if (value instanceof DuckDBTimestampMillisecondsValue) {
    return value.isFinite ? isoFromMicros(value.millis * 1000n) : infinity(value.millis);
  }
  if (value instanceof DuckDBTimestampSecondsValue) {
    return value.isFinite ? isoFromMicros(value.seconds * 1_000_000n) : infinity(value.seconds);
  }
  if (value instanceof DuckDBTimestampNanosecondsValue) {
    return value.isFinite ? isoFromTicks(value.nanos, 1_000_000_000n, 9) : infinity(value.nanos);
  }
  // node-api writes a finite DATE its own way (`5877642-06-24 (BC)`, kept); its infinities as made-up dates
  if (value instanceof DuckDBDateValue) return value.isFinite ? String(value) : infinity(value.days);
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  if (value instanceof DuckDBBlobValue) return base64(value.bytes);
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map(toLakeValue);
  if (value instanceof DuckDBStructValue) {
    return recordOf(Object.entries(value.entries).map(([key, item]) => [key, toLakeValue(item)]));
  }
  if (value instanceof DuckDBMapValue) {
    if (value.entries.every((entry) => typeof entry.key === 'string')) {
      return recordOf(value.entries.map((entry) => [entry.key as string, toLakeValue(entry.value)]));
    }
    return value.entries.map((entry) => ({ key: toLakeValue(entry.key), value: toLakeValue(entry.value) }));
  }
  // times, intervals, UUIDs, enums, unions: DuckDB's own text for them
  return String(value);
}

/**
 * An object with exactly these members. Defined, not assigned: `out['__proto__'] = v` would set the prototype and
 * the member would vanish from the answer.
 */
export function recordOf(entries: Iterable<readonly [string, LakeValue]>): { [key: string]: LakeValue } {
  const out: { [key: string]: LakeValue } = {};
  for (const [key, item] of entries) defineMember(out, key, item);
  return out;
}

export function defineMember(out: { [key: string]: LakeValue }, key: string, item: LakeValue): void {
  Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
}

function infinity(sign: bigint | number): string {
  return sign > 0 ? 'infinity' : '-infinity';
}

function exactNumber(value: bigint): number | string {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();
}

/** `2026-12-01T10:00:00.123456Z`: the lake's TIMESTAMP (µs, UTC) without rounding to milliseconds. */
export function isoFromMicros(micros: bigint): string {
  return isoFromTicks(micros, 1_000_000n, 6);
}

const SECONDS_PER_DAY = 86_400n;

/**
 * `ticks` (`perSecond` a second, from 1970-01-01 UTC) as ISO 8601 with `digits` fraction digits, computed on integers
 * so every DuckDB timestamp is written exactly: a time before 1970 is floored into its day and second (-1 µs is
 * 1969-12-31T23:59:59.999999Z), and a year past 9999 or before 0 is written `+294247` / `-000001` as JS does.
 */
function isoFromTicks(ticks: bigint, perSecond: bigint, digits: number): string {
  const perDay = perSecond * SECONDS_PER_DAY;
  let days = ticks / perDay;
  let rest = ticks % perDay;
  if (rest < 0n) {
    rest += perDay;
    days -= 1n;
  }
  const second = Number(rest / perSecond);
  const fraction = (rest % perSecond).toString().padStart(digits, '0');
  const time = [Math.floor(second / 3600), Math.floor(second / 60) % 60, second % 60].map(pad2).join(':');
  return `${civilDate(Number(days))}T${time}.${fraction}Z`;
}

/** Days since 1970-01-01 → `YYYY-MM-DD` in the proleptic Gregorian calendar (Howard Hinnant's civil_from_days). */
function civilDate(days: number): string {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shifted = Math.floor((5 * dayOfYear + 2) / 153); // months counted from March
  const day = dayOfYear - Math.floor((153 * shifted + 2) / 5) + 1;
  const month = shifted < 10 ? shifted + 3 : shifted - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const yearText =
    year >= 0 && year <= 9999
      ? String(year).padStart(4, '0')
      : `${year < 0 ? '-' : '+'}${String(Math.abs(year)).padStart(6, '0')}`;
  return `${yearText}-${pad2(month)}-${pad2(day)}`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
