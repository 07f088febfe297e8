import type { SchemaElement } from 'hyparquet-writer';
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';
import type { AlignColumn } from '../columns.js';
import type { RowSink, SinkContext } from './sink.js';

/** The key of the Parquet footer's key/value metadata that holds the JSON description. */
export const PARQUET_DESCRIPTION_KEY = 'vlink.align';

/** hyparquet-writer's byte writer, handing each flushed row group on instead of growing one buffer for the file. */
class ChunkWriter extends ByteWriter {
  readonly chunks: Uint8Array[] = [];

  flush(): void {
    if (this.index === 0) return;
    this.chunks.push(new Uint8Array(this.buffer.slice(0, this.index)));
    this.index = 0;
  }

  override finish(): void {
    this.flush();
  }

  take(): Uint8Array[] {
    return this.chunks.splice(0);
  }
}

function schemaElement(column: AlignColumn): SchemaElement {
  const repetition_type = column.role === 'time' ? 'REQUIRED' : 'OPTIONAL';
  switch (column.type) {
    case 'timestamp':
      return {
        name: column.name,
        type: 'INT64',
        repetition_type,
        converted_type: 'TIMESTAMP_MICROS',
        logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' },
      };
    case 'double':
      return { name: column.name, type: 'DOUBLE', repetition_type };
    case 'boolean':
      return { name: column.name, type: 'BOOLEAN', repetition_type };
    case 'string':
      return { name: column.name, type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type };
    default:
      return { name: column.name, type: 'BYTE_ARRAY', converted_type: 'JSON', repetition_type };
  }
}

function cell(column: AlignColumn, value: unknown, epochOffsetUs: number): unknown {
  if (value === null || value === undefined) return null;
  if (column.type === 'timestamp') return BigInt(Math.round(value as number) + epochOffsetUs);
  if (column.type === 'json') return JSON.stringify(value) ?? null;
  return value;
}

/**
 * Parquet through hyparquet-writer: one typed, nullable column per output column (times as TIMESTAMP(MICROS, UTC)),
 * SNAPPY pages, a row group written and handed on each time `rowGroupSize` rows are buffered. The JSON description
 * goes in the footer's key/value metadata under `vlink.align`.
 */
export function parquetSink({ columns, epochOffsetUs, rowGroupSize }: SinkContext): RowSink {
  const writer = new ChunkWriter();
  const schema: SchemaElement[] = [{ name: 'root', num_children: columns.length }, ...columns.map(schemaElement)];
  const parquet = new ParquetWriter({ writer, schema, createdBy: 'vlink-bag align (hyparquet-writer)' });
  let buffered: unknown[][] = columns.map(() => []);
  let count = 0;
  const writeGroup = () => {
    if (count === 0) return;
    const columnData = columns.map((c, i) => ({ name: c.name, data: buffered[i]! }));
    void parquet.write({ columnData, rowGroupSize: count });
    buffered = columns.map(() => []);
    count = 0;
  };
  return {
    push(rows) {
      for (const row of rows) {
        for (let i = 0; i < columns.length; i++) buffered[i]!.push(cell(columns[i]!, row[i], epochOffsetUs));
        if (++count >= rowGroupSize) writeGroup();
      }
      return writer.take();
    },
    finish(description) {
      writeGroup();
      parquet.kvMetadata = [{ key: PARQUET_DESCRIPTION_KEY, value: JSON.stringify(description) }];
      void parquet.finish();
      return writer.take();
    },
  };
}
