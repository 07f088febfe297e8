import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type DuckDBAppender, type DuckDBConnection, DuckDBInstance, DuckDBTimestampValue } from '@duckdb/node-api';
import { BagError } from '@vlink/bag';
import { BAG_COLUMNS, CATALOG_BAGS_FILE, CATALOG_URLS_FILE, type LakeColumn, URL_COLUMNS } from '../layout.js';
import type { BagRow, UrlRow } from './describe-bag.js';

/** What incremental indexing compares for a bag already in the catalog. */
export interface CatalogedBag {
  bagId: string;
  location: string;
  size: number;
  modifiedUs: number | null;
  etag: string | null;
}

/**
 * The in-memory urls table's extra column: the location of the bag each row belongs to. A bag is its location;
 * `bag_id` is only unique per catalog once indexing is done (a run may meet two bags with one id and refuse the
 * second, whose old rows must go without touching the first's), so rows are removed by location. Never written out.
 */
const LOCATION = '_bag_location';

/**
 * The catalog while it is being indexed: the two tables in an in-memory DuckDB, typed exactly as the layout says,
 * loaded from the existing Parquet files and written back whole (temporary file, then rename).
 */
export class CatalogTables {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<CatalogTables> {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const tables = new CatalogTables(instance, connection);
    await connection.run(createTable('bags', BAG_COLUMNS));
    await connection.run(createTable('urls', [...URL_COLUMNS, LOCATION_COLUMN]));
    return tables;
  }

  /** Loads `bags.parquet` and `urls.parquet` of `dir` when they exist; returns the bags they list. */
  async load(dir: string): Promise<CatalogedBag[]> {
    const bags = join(dir, CATALOG_BAGS_FILE);
    const urls = join(dir, CATALOG_URLS_FILE);
    if (!existsSync(bags)) return [];
    try {
      await this.connection.run(insertFromParquet('bags', BAG_COLUMNS, bags));
      if (existsSync(urls)) await this.connection.run(insertUrlsFromParquet(urls));
    } catch (error) {
      throw BagError.wrap(error, 'CORRUPT_FILE', `the existing catalog in ${dir} cannot be read`, { file: bags });
    }
    const reader = await this.connection.runAndReadAll(
      'SELECT bag_id, location, size_bytes, epoch_us(modified) AS modified_us, etag FROM bags',
    );
    return reader.getRowObjectsJS().map((row) => ({
      bagId: String(row['bag_id']),
      location: String(row['location']),
      size: Number(row['size_bytes']),
      modifiedUs: row['modified_us'] === null ? null : Number(row['modified_us']),
      etag: row['etag'] === null ? null : String(row['etag']),
    }));
  }

  /** Drops the rows of the bag at `location` (its row in `bags`, its urls). */
  async remove(location: string): Promise<void> {
    await this.connection.run('DELETE FROM bags WHERE location = $1', [location]);
    await this.connection.run(`DELETE FROM urls WHERE ${LOCATION} = $1`, [location]);
  }

  async add(bag: BagRow, urls: readonly UrlRow[]): Promise<void> {
    await append(this.connection, 'bags', BAG_COLUMNS, [bag as unknown as Record<string, unknown>]);
    await append(
      this.connection,
      'urls',
      [...URL_COLUMNS, LOCATION_COLUMN],
      urls.map((url) => ({ ...url, [LOCATION]: bag.location })),
    );
  }

  /** Writes both files into `dir`, each whole: to a temporary name first, renamed over the old file. */
  async write(dir: string): Promise<void> {
    for (const [table, file] of [
      ['bags', CATALOG_BAGS_FILE],
      ['urls', CATALOG_URLS_FILE],
    ] as const) {
      const target = join(dir, file);
      const temporary = join(dir, `.${file}.${process.pid}.tmp`);
      try {
        await this.connection.run(
          `COPY (SELECT * ${table === 'bags' ? 'FROM bags ORDER BY bag_id' : `EXCLUDE (${LOCATION}) FROM urls ORDER BY bag_id, url, action`}) TO ${quote(temporary)} (FORMAT parquet)`,
        );
        renameSync(temporary, target);
      } catch (error) {
        rmSync(temporary, { force: true });
        throw BagError.wrap(error, 'IO_ERROR', `cannot write the catalog file ${target}`, { file: target });
      }
    }
  }

  /** Rows of each table. */
  async counts(): Promise<{ bags: number; urls: number }> {
    const reader = await this.connection.runAndReadAll(
      'SELECT (SELECT count(*) FROM bags) AS bags, (SELECT count(*) FROM urls) AS urls',
    );
    const row = reader.getRowObjectsJS()[0]!;
    return { bags: Number(row['bags']), urls: Number(row['urls']) };
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

function createTable(name: string, columns: readonly LakeColumn[]): string {
  const list = columns.map((c) => `${ident(c.name)} ${c.type}${c.nullable ? '' : ' NOT NULL'}`);
  return `CREATE TABLE ${name} (${list.join(', ')})`;
}

const LOCATION_COLUMN: LakeColumn = { name: LOCATION, type: 'VARCHAR', nullable: false, description: '' };

/** Copies an existing file's rows by column name, cast to the layout's types (a file of an older layout fails). */
function insertFromParquet(table: string, columns: readonly LakeColumn[], file: string): string {
  const names = columns.map((c) => ident(c.name)).join(', ');
  const casts = columns.map((c) => `CAST(${ident(c.name)} AS ${c.type})`).join(', ');
  return `INSERT INTO ${table} (${names}) SELECT ${casts} FROM read_parquet(${quote(file)})`;
}

/**
 * The existing urls file's rows, each with its bag's location from the bags just loaded (ids are unique in a written
 * catalog); rows of no bag are left out, as they would be dropped with a bag no one has any more.
 */
function insertUrlsFromParquet(file: string): string {
  const names = [...URL_COLUMNS.map((c) => ident(c.name)), LOCATION].join(', ');
  const casts = URL_COLUMNS.map((c) => `CAST(u.${ident(c.name)} AS ${c.type})`).join(', ');
  return (
    `INSERT INTO urls (${names}) SELECT ${casts}, b.location FROM read_parquet(${quote(file)}) AS u ` +
    'JOIN bags AS b ON b.bag_id = CAST(u.bag_id AS VARCHAR)'
  );
}

async function append(
  connection: DuckDBConnection,
  table: string,
  columns: readonly LakeColumn[],
  rows: readonly Record<string, unknown>[],
): Promise<void> {
  if (rows.length === 0) return;
  const appender = await connection.createAppender(table);
  try {
    for (const row of rows) {
      for (const column of columns) appendValue(appender, column, row[column.name]);
      appender.endRow();
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

function appendValue(appender: DuckDBAppender, column: LakeColumn, value: unknown): void {
  if (value === null || value === undefined) {
    if (!column.nullable) throw new BagError('INTERNAL', `catalog column ${column.name} must not be null`);
    appender.appendNull();
    return;
  }
  switch (column.type) {
    case 'VARCHAR':
      appender.appendVarchar(String(value));
      return;
    case 'BIGINT':
      appender.appendBigInt(BigInt(Math.round(Number(value))));
      return;
    case 'INTEGER':
      appender.appendInteger(Number(value));
      return;
    case 'DOUBLE':
      appender.appendDouble(Number(value));
      return;
    case 'BOOLEAN':
      appender.appendBoolean(Boolean(value));
      return;
    case 'TIMESTAMP':
      appender.appendTimestamp(new DuckDBTimestampValue(BigInt(Math.round(Number(value)))));
      return;
    case 'BLOB':
      appender.appendBlob(value as Uint8Array);
      return;
  }
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
