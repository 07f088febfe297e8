import { DuckDBInstance } from '@duckdb/node-api';

/**
 * An in-memory DuckDB for the export's staging tables. `preserve_insertion_order` keeps each part's rows in replay
 * order; the memory limit bounds what DuckDB holds besides the staged batches (which the export bounds itself).
 */
export async function openExportDb(threads: number, memoryLimit: string): Promise<DuckDBInstance> {
  return DuckDBInstance.create(':memory:', {
    threads: String(threads),
    memory_limit: memoryLimit,
    preserve_insertion_order: 'true',
  });
}

/** A string as a SQL literal. */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
