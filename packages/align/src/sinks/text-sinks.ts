import type { AlignColumn } from '../columns.js';
import { isoMicros, type RowSink, type SinkContext } from './sink.js';

const encoder = new TextEncoder();

/** A CSV field as RFC 4180 writes it: quoted when it holds a comma, a quote or a line break. */
function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvValue(column: AlignColumn, value: unknown, epochOffsetUs: number): string {
  if (value === null || value === undefined) return '';
  switch (column.type) {
    case 'timestamp':
      return isoMicros((value as number) + epochOffsetUs);
    case 'json':
      return csvField(JSON.stringify(value));
    case 'string':
      return csvField(value as string);
    default:
      return String(value);
  }
}

/** CSV (RFC 4180, `\n` line ends): a header of column names, empty fields for null, times in ISO 8601 UTC. */
export function csvSink({ columns, epochOffsetUs }: SinkContext): RowSink {
  let header = `${columns.map((c) => csvField(c.name)).join(',')}\n`;
  return {
    push(rows) {
      let text = header;
      header = '';
      for (const row of rows) {
        text += `${row.map((v, i) => csvValue(columns[i]!, v, epochOffsetUs)).join(',')}\n`;
      }
      return text ? [encoder.encode(text)] : [];
    },
    finish() {
      return header ? [encoder.encode(header)] : [];
    },
  };
}

/** NDJSON: one object per row keyed by column name; times ISO 8601 UTC; NaN and ±Infinity are null (JSON has none). */
export function ndjsonSink({ columns, epochOffsetUs }: SinkContext): RowSink {
  return {
    push(rows) {
      let text = '';
      for (const row of rows) {
        const object: Record<string, unknown> = {};
        row.forEach((v, i) => {
          const column = columns[i]!;
          object[column.name] =
            column.type === 'timestamp' && v !== null ? isoMicros((v as number) + epochOffsetUs) : v;
        });
        text += `${JSON.stringify(object)}\n`;
      }
      return text ? [encoder.encode(text)] : [];
    },
    finish() {
      return [];
    },
  };
}
