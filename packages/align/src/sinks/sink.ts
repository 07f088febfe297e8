import type { AlignColumn } from '../columns.js';

/**
 * Turns rows into the bytes of one output format. `push` and `finish` return the bytes ready so far (possibly none):
 * the caller writes them out, so a sink holds at most one row group (Parquet) and never the whole session.
 */
export interface RowSink {
  /** Rows in the column order of `columns`; times are µs on the time base. */
  push(rows: readonly unknown[][]): Uint8Array[];
  /** The rest of the file; `description` is what the JSON description holds (Parquet keeps it in its footer). */
  finish(description: unknown): Uint8Array[];
}

export interface SinkContext {
  columns: readonly AlignColumn[];
  /** Added to a time column's µs to make it µs since the Unix epoch (the recording start). */
  epochOffsetUs: number;
  /** Parquet: rows per row group. */
  rowGroupSize: number;
}

/** ISO 8601 in UTC with microseconds (`2024-05-01T12:00:00.123456Z`): what CSV and NDJSON write for a time. */
export function isoMicros(epochUs: number): string {
  const us = Math.round(epochUs);
  const ms = Math.floor(us / 1000);
  const rest = us - ms * 1000;
  return `${new Date(ms).toISOString().slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}
