import {
  DuckDBArrayValue,
  DuckDBBlobValue,
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
 * strings otherwise, so no precision is lost silently; timestamps become ISO 8601 UTC with their microseconds (a JS
 * Date would drop them); BLOBs become base64; structs objects, lists arrays, maps objects (string keys) or
 * `[{key, value}]`.
 */
export function toLakeValue(value: DuckDBValue): LakeValue {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return exactNumber(value);
  if (value instanceof DuckDBTimestampValue || value instanceof DuckDBTimestampTZValue) {
    return value.isFinite ? isoFromMicros(value.micros) : String(value);
  }
  if (value instanceof DuckDBTimestampMillisecondsValue) return isoFromMicros(value.millis * 1000n);
  if (value instanceof DuckDBTimestampSecondsValue) return isoFromMicros(value.seconds * 1_000_000n);
  if (value instanceof DuckDBTimestampNanosecondsValue) return isoFromMicros(value.nanos / 1000n);
  if (value instanceof DuckDBDecimalValue) return value.toDouble();
  if (value instanceof DuckDBBlobValue) return base64(value.bytes);
  if (value instanceof DuckDBListValue || value instanceof DuckDBArrayValue) return value.items.map(toLakeValue);
  if (value instanceof DuckDBStructValue) {
    const out: Record<string, LakeValue> = {};
    for (const [key, item] of Object.entries(value.entries)) out[key] = toLakeValue(item);
    return out;
  }
  if (value instanceof DuckDBMapValue) {
    if (value.entries.every((entry) => typeof entry.key === 'string')) {
      return Object.fromEntries(value.entries.map((entry) => [entry.key as string, toLakeValue(entry.value)]));
    }
    return value.entries.map((entry) => ({ key: toLakeValue(entry.key), value: toLakeValue(entry.value) }));
  }
  // dates, times, intervals, UUIDs, enums, unions: DuckDB's own text for them
  return String(value);
}

function exactNumber(value: bigint): number | string {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
    ? Number(value)
    : value.toString();
}

/** `2026-12-01T10:00:00.123456Z`: the lake's TIMESTAMP (µs, UTC) without rounding to milliseconds. */
export function isoFromMicros(micros: bigint): string {
  const millis = micros >= 0n ? micros / 1000n : -((-micros + 999n) / 1000n);
  const rest = Number(micros - millis * 1000n);
  const iso = new Date(Number(millis)).toISOString();
  return `${iso.slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}

function base64(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}
