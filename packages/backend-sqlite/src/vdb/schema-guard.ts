import { BagError } from '@vlink/bag-core';
import type { SqliteConnection, SqlValue } from '../driver/driver.js';

/**
 * The columns the reader selects, per table (format reference §2.2); `VLinkSchemas` may be absent (§2.10). A file
 * may have more columns, never fewer.
 */
const EXPECTED: ReadonlyArray<{ table: string; columns: readonly string[]; optional?: boolean }> = [
  {
    table: 'VLinkHeader',
    columns: [
      'major',
      'minor',
      'patch',
      'count',
      'duration',
      'accuracy',
      'compress',
      'process',
      'date',
      'tag',
      'complete',
      'timezone',
      'start_timestamp',
    ],
  },
  { table: 'VLinkUrls', columns: ['id', 'url', 'type', 'ser', 'encoding', 'count', 'loss', 'size', 'freq'] },
  { table: 'VLinkDatas', columns: ['elapsed', 'url', 'action', 'data'] },
  { table: 'VLinkSchemas', columns: ['ser', 'encoding', 'data'], optional: true },
];

/** The indexes the reader relies on for its read order, with the columns they must cover in order (§2.2, §2.10). */
const INDEX_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  idx_elapsed_url: ['elapsed', 'url'],
  idx_elapsed: ['elapsed'],
};

/**
 * Checks, before any query touches the VLink tables, that the file is what a VLink writer makes: the VLink tables
 * are ordinary tables with the expected columns, and the schema holds no view, trigger or virtual table anywhere.
 * A `.vdb` from an untrusted source could otherwise turn `SELECT … FROM VLinkHeader` into an endless recursive query
 * (a view), run code on reads (a virtual table module) or compute columns on every row (generated columns), and no
 * SQLite driver we use can interrupt a statement. Only `sqlite_master` and table/index pragmas are read here, which
 * SQLite answers from the schema without evaluating any of it. Anything else is `CORRUPT_FILE`.
 */
export function assertVdbSchema(db: SqliteConnection, path: string): void {
  const tables = assertNoExecutableSchema(db, path);
  for (const { table, columns, optional } of EXPECTED) {
    const name = tables.get(table.toLowerCase());
    if (name === undefined) {
      if (optional) continue;
      throw new BagError('CORRUPT_FILE', `not a VLink .vdb: no table ${table}`, { file: path });
    }
    const found = new Map<string, SqlValue>();
    for (const column of db.prepare(`PRAGMA table_xinfo(${quote(name)});`).all())
      found.set(String(column['name']).toLowerCase(), column['hidden'] ?? 0);
    for (const column of columns) {
      const hidden = found.get(column);
      if (hidden === undefined)
        throw new BagError('CORRUPT_FILE', `not a VLink .vdb: table ${table} has no column ${column}`, { file: path });
      // 2 and 3 are generated columns (computed on read), 1 a virtual table's hidden column.
      if (Number(hidden) !== 0) throw refusal(`${table}.${column} is a generated column`, path);
    }
  }
}

/**
 * The part of `assertVdbSchema` that maintenance needs before writing to a file (`tag` adds a column older files
 * lack): no view, trigger (an UPDATE would run it) or virtual table. Returns the tables, lower-case name → name.
 */
export function assertNoExecutableSchema(db: SqliteConnection, path: string, format = VDB): Map<string, string> {
  const tables = new Map<string, string>();
  for (const row of db.prepare('SELECT type, name, sql FROM sqlite_master;').all()) {
    const type = String(row['type']);
    const name = String(row['name']);
    if (type === 'view' || type === 'trigger') throw refusal(`it defines the ${type} "${name}"`, path, format);
    if (type !== 'table') continue;
    if (/^\s*CREATE\s+VIRTUAL\s+TABLE\b/i.test(String(row['sql'] ?? '')))
      throw refusal(`it defines the virtual table "${name}"`, path, format);
    tables.set(name.toLowerCase(), name);
  }
  return tables;
}

/**
 * For the SQLite files of other formats that are also only tables and indexes (a rosbag2 sqlite3 storage): what
 * `assertVdbSchema` checks of a `.vdb`, for `tables` (the ones that will be read) — no view, trigger or virtual table,
 * and no generated column, whose expression SQLite would evaluate on every row read (found by hand: three rows whose
 * `data` was `zeroblob(400000000 + x)` took 8 s and 3 GiB to read). `format` names the file in the refusal.
 */
export function assertPlainTables(
  db: SqliteConnection,
  path: string,
  format: { name: string; plural: string },
  tables: readonly string[],
): void {
  const present = assertNoExecutableSchema(db, path, format);
  for (const wanted of tables) {
    const table = present.get(wanted.toLowerCase());
    if (table === undefined) continue;
    for (const column of db.prepare(`PRAGMA table_xinfo(${quote(table)});`).all())
      if (Number(column['hidden'] ?? 0) !== 0)
        throw refusal(`${table}.${String(column['name'])} is a generated column`, path, format);
  }
}

/** How a refusal names the format: "not <name>: …; refused (<plural> have only tables and indexes)". */
const VDB = { name: 'a VLink .vdb', plural: 'VLink files' };

function refusal(what: string, path: string, format = VDB): BagError {
  return new BagError(
    'CORRUPT_FILE',
    `not ${format.name}: ${what}; refused (${format.plural} have only tables and indexes)`,
    { file: path },
  );
}

/**
 * Which of the reader's read-order indexes the file really has: an index only counts when it is a full (not
 * partial) index of `VLinkDatas` over exactly the expected leading columns. A file that merely names an index
 * `idx_elapsed` would otherwise make every `ORDER BY elapsed` sort the whole table.
 */
export function trustedIndexes(db: SqliteConnection, names: Iterable<string>): Set<string> {
  const partial = new Map<string, boolean>();
  for (const row of db.prepare('PRAGMA index_list(VLinkDatas);').all())
    partial.set(String(row['name']), Number(row['partial'] ?? 0) !== 0);
  const out = new Set<string>();
  for (const name of names) {
    const wanted = INDEX_COLUMNS[name];
    if (!wanted || partial.get(name) !== false) continue;
    const columns = db
      .prepare(`PRAGMA index_info(${quote(name)});`)
      .all()
      .sort((a, b) => Number(a['seqno']) - Number(b['seqno']))
      .map((row) => (row['name'] === null ? null : String(row['name']).toLowerCase()));
    if (wanted.every((column, i) => columns[i] === column)) out.add(name);
  }
  return out;
}

/** An SQL identifier in double quotes (PRAGMA arguments cannot be bound). */
function quote(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
