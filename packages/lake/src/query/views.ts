import { readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { CATALOG_BAGS_FILE, CATALOG_URLS_FILE, EXPORT_MESSAGES_DIR } from '../layout.js';

/** The views a lake offers and the folder each needs, for the message that says why one is absent. */
export const LAKE_VIEWS = {
  bags: 'catalog',
  urls: 'catalog',
  messages: 'export',
} as const;
export type LakeViewName = keyof typeof LAKE_VIEWS;

/**
 * One view to create: its name, the SQL behind it, and what DuckDB may read for it: one file, or one folder (DuckDB
 * may write wherever it may read, so nothing wider: not the catalog folder, not the export's own state in `_export/`).
 */
export interface LakeView {
  readonly name: LakeViewName;
  readonly sql: string;
  readonly file?: string;
  readonly folder?: string;
}

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * The real path of a lake folder (DuckDB's allowed_directories compares paths as text, so symlinks are resolved
 * here), or a NOT_FOUND naming the option that gave it.
 */
function folderOf(dir: string, option: string): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw new BagError('NOT_FOUND', `the ${option} folder does not exist: ${dir}`);
  }
  if (!statSync(real).isDirectory()) throw new BagError('INVALID_ARGUMENT', `the ${option} is not a folder: ${dir}`);
  return real;
}

/** `bags` and `urls` over `<catalog>/bags.parquet` and `urls.parquet` (layout.ts). */
export function catalogViews(dir: string): LakeView[] {
  const folder = folderOf(dir, 'catalog');
  return (
    [
      ['bags', CATALOG_BAGS_FILE],
      ['urls', CATALOG_URLS_FILE],
    ] as const
  ).map(([name, file]) => {
    const path = join(folder, file);
    try {
      statSync(path);
    } catch {
      throw new BagError('NOT_FOUND', `the catalog folder ${dir} has no ${file} (write it with vlink-bag index)`);
    }
    return { name, sql: `SELECT * FROM read_parquet(${quote(path)})`, file: path };
  });
}

/**
 * `messages` over every Parquet file under `<export>/messages/`: hive partitions `url` and `date` read as text (the
 * url is percent-decoded by DuckDB; without hive_types a url such as `1` or the date would be cast), and
 * union_by_name because each url's files carry their own `data` struct — DuckDB merges the structs' fields.
 */
export function exportViews(dir: string): LakeView[] {
  const folder = folderOf(dir, 'export');
  const messages = join(folder, EXPORT_MESSAGES_DIR);
  if (!hasParquet(messages)) {
    throw new BagError(
      'NOT_FOUND',
      `the export folder ${dir} has no Parquet files under ${EXPORT_MESSAGES_DIR}/ (write them with vlink-bag export)`,
    );
  }
  const glob = quote(join(messages, '**', '*.parquet'));
  const options = "hive_partitioning = true, union_by_name = true, hive_types = {'url': VARCHAR, 'date': VARCHAR}";
  return [{ name: 'messages', sql: `SELECT * FROM read_parquet(${glob}, ${options})`, folder: messages }];
}

function hasParquet(dir: string): boolean {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return false;
  }
  for (const entry of entries) {
    if (entry.isFile() && entry.name.endsWith('.parquet')) return true;
    if (entry.isDirectory() && hasParquet(join(dir, entry.name))) return true;
  }
  return false;
}

/** The SQL that creates a view. */
export function createViewSql(view: LakeView): string {
  return `CREATE VIEW ${view.name} AS ${view.sql}`;
}

/** Text for DuckDB's `SET allowed_directories`: a list of quoted folders, each ending in `/`. */
export function sqlFolderList(folders: readonly string[]): string {
  return `[${[...new Set(folders)].map((folder) => quote(folder.endsWith('/') ? folder : `${folder}/`)).join(', ')}]`;
}

export function sqlPathList(paths: readonly string[]): string {
  return `[${[...new Set(paths)].map(quote).join(', ')}]`;
}

export { quote as sqlString };
