import type { LakeResult } from './lake.js';
import type { LakeValue } from './values.js';

/** Text answers of a query; Parquet is written by DuckDB itself (`Lake.writeParquet`). */
export type LakeTextFormat = 'table' | 'csv' | 'json' | 'ndjson';
export const LAKE_TEXT_FORMATS: readonly LakeTextFormat[] = ['table', 'csv', 'json', 'ndjson'];

/** Rows as objects keyed by column name (a repeated name keeps its last value, as JSON objects would). */
export function rowObjects(result: LakeResult): Record<string, LakeValue>[] {
  return result.rows.map((row) => Object.fromEntries(result.columns.map((column, i) => [column.name, row[i] ?? null])));
}

/** One JSON object per line. */
export function toNdjson(result: LakeResult): string {
  return rowObjects(result)
    .map((row) => `${JSON.stringify(row)}\n`)
    .join('');
}

/** A JSON array of row objects. */
export function toJsonArray(result: LakeResult): string {
  return `${JSON.stringify(rowObjects(result))}\n`;
}

/** RFC 4180: a header line, fields quoted when they hold a comma, quote or line break; nested values as JSON. */
export function toCsv(result: LakeResult): string {
  const lines = [result.columns.map((column) => csvField(column.name)).join(',')];
  for (const row of result.rows) lines.push(row.map((value) => csvField(cellText(value, ''))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/**
 * Aligned columns for a terminal: a header with each column's type, numbers right-aligned, NULL spelled out, cells
 * longer than `maxWidth` cut with `…`, and a last line with the row count (and that rows were left out).
 */
export function toTable(result: LakeResult, maxWidth = 48): string {
  const cut = (text: string) => (text.length > maxWidth ? `${text.slice(0, maxWidth - 1)}…` : text);
  const head = result.columns.map((column) => cut(column.name));
  const types = result.columns.map((column) => cut(column.type));
  const cells = result.rows.map((row) => row.map((value) => cut(cellText(value, 'NULL').replace(/[\r\n\t]/g, ' '))));
  const widths = head.map((name, i) =>
    Math.max(name.length, types[i]?.length ?? 0, ...cells.map((row) => row[i]?.length ?? 0)),
  );
  const right = result.rows[0]?.map((value) => typeof value === 'number') ?? [];
  const line = (row: string[], alignRight: boolean[] = []) =>
    row
      .map((cell, i) => (alignRight[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const out = [line(head), line(types), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const row of cells) out.push(line(row, right));
  const count = `${result.rows.length} row${result.rows.length === 1 ? '' : 's'}`;
  out.push(result.truncated ? `${count} (more left out: raise the limit)` : count);
  return `${out.join('\n')}\n`;
}

export function formatResult(result: LakeResult, format: LakeTextFormat): string {
  switch (format) {
    case 'table':
      return toTable(result);
    case 'csv':
      return toCsv(result);
    case 'json':
      return toJsonArray(result);
    case 'ndjson':
      return toNdjson(result);
  }
}

function cellText(value: LakeValue, nullText: string): string {
  if (value === null) return nullText;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
