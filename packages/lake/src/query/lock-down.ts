import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance, type DuckDBPreparedStatement, StatementType } from '@duckdb/node-api';
import { BagError } from '@vlink/bag-core';
import { createViewSql, type LakeView, sqlFolderList, sqlPathList } from './views.js';

export interface LockedOptions {
  outputFiles: readonly string[];
  memoryLimit: string;
  threads?: number;
}

/** A locked DuckDB and how to remove what opening it left on disk (once it is closed). */
export interface LockedInstance {
  readonly instance: DuckDBInstance;
  /** Closes the instance and removes its folder. */
  close(): void;
}

const BASE_CONFIG = {
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
  allow_community_extensions: 'false',
  allow_persistent_secrets: 'false',
} as const;

/**
 * A DuckDB over the views that can change nothing. The views are written to a database file of their own, which is
 * then opened READ_ONLY: no statement, whatever gets past `prepareRead`, can replace a view every later query of a
 * server reads (DuckDB cannot open an in-memory database read-only). DuckDB may then read only the views' files and
 * folders and write only `outputFiles` (enable_external_access=false with allowed_paths / allowed_directories; DuckDB
 * makes no difference between reading and writing there, which is why `prepareRead` lets nothing but reads run), has
 * no temp directory (a place SQL could fill), loads no extension, and no statement can change any of that
 * (lock_configuration). The file is removed as soon as the read-only instance holds it open (at close where the
 * system refuses that).
 */
export async function openLockedInstance(views: readonly LakeView[], options: LockedOptions): Promise<LockedInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-lake-'));
  const remove = () => {
    try {
      rmSync(dir, { recursive: true, force: true });
      return true;
    } catch {
      return false; // Windows: the file is still open
    }
  };
  const file = join(dir, 'views.duckdb');
  let instance: DuckDBInstance | undefined;
  try {
    const writer = await DuckDBInstance.create(file, { ...BASE_CONFIG, threads: '1' });
    try {
      const connection = await writer.connect();
      try {
        for (const view of views) await connection.run(createViewSql(view));
      } finally {
        connection.closeSync();
      }
    } finally {
      writer.closeSync();
    }
    instance = await DuckDBInstance.create(file, {
      ...BASE_CONFIG,
      access_mode: 'READ_ONLY',
      memory_limit: options.memoryLimit,
      ...(options.threads === undefined ? {} : { threads: String(options.threads) }),
    });
    const connection = await instance.connect();
    try {
      await connection.run("SET temp_directory = ''");
      const folders = views.flatMap((view) => (view.folder === undefined ? [] : [view.folder]));
      if (folders.length > 0) await connection.run(`SET allowed_directories = ${sqlFolderList(folders)}`);
      const files = [...views.flatMap((view) => (view.file === undefined ? [] : [view.file])), ...options.outputFiles];
      if (files.length > 0) await connection.run(`SET allowed_paths = ${sqlPathList(files)}`);
      await connection.run('SET enable_external_access = false');
      await connection.run('SET lock_configuration = true');
    } finally {
      connection.closeSync();
    }
  } catch (error) {
    instance?.closeSync();
    remove();
    throw BagError.wrap(error, 'QUERY_ERROR', 'cannot open the lake');
  }
  let removed = remove();
  const opened = instance;
  return {
    instance: opened,
    close() {
      opened.closeSync();
      if (!removed) removed = remove();
    },
  };
}

/** SQL's white space as DuckDB's scanner reads it (JS's `\s` also takes Unicode spaces, which DuckDB does not). */
const PLAIN_EXPLAIN = /^[ \t\n\r\f\v]*EXPLAIN[ \t\n\r\f\v]+/i;

/**
 * Prepares `sql` when it is one read: a SELECT (as DuckDB types it: also FROM-first, VALUES, DESCRIBE, SUMMARIZE,
 * SHOW), or, with `explain`, a plain EXPLAIN of one. Everything else (COPY, CREATE, SET, ATTACH, INSTALL …) is refused
 * before it runs.
 */
export async function prepareRead(
  connection: DuckDBConnection,
  sql: string,
  { explain }: { explain: boolean },
): Promise<DuckDBPreparedStatement> {
  const statement = await prepareOne(connection, sql);
  const type = statement.statementType;
  if (type === StatementType.SELECT) return statement;
  if (type === StatementType.EXPLAIN && explain) {
    await checkExplained(connection, sql);
    return statement;
  }
  throw new BagError('QUERY_ERROR', `only SELECT (and EXPLAIN) run on a lake; this is a ${kindOf(type)} statement`);
}

/**
 * DuckDB types `EXPLAIN ANALYZE <statement>` as EXPLAIN, and it runs the statement (a COPY … TO writes its file, a
 * CREATE OR REPLACE VIEW replaces the view): so the statement after the keyword is prepared on its own and must be a
 * SELECT, and ANALYZE and options are refused. Only white space may stand before it, so the text checked here is
 * exactly the statement DuckDB explains (a comment could hide a word from a check that reads the text otherwise).
 */
async function checkExplained(connection: DuckDBConnection, sql: string): Promise<void> {
  const head = PLAIN_EXPLAIN.exec(sql);
  const explained = head === null ? '' : sql.slice(head[0].length);
  if (head === null || explained.startsWith('/*') || explained.startsWith('--')) {
    throw new BagError('QUERY_ERROR', 'write EXPLAIN first, then the SELECT it explains (no comments around EXPLAIN)');
  }
  if (/^ANALY[SZ]E\b/i.test(explained)) {
    throw new BagError('QUERY_ERROR', 'EXPLAIN ANALYZE runs the statement it explains: not on a lake (plain EXPLAIN)');
  }
  if (explained.startsWith('(')) {
    throw new BagError('QUERY_ERROR', 'EXPLAIN options do not run on a lake: write EXPLAIN SELECT …');
  }
  const inner = await prepareOne(connection, explained);
  if (inner.statementType !== StatementType.SELECT) {
    throw new BagError(
      'QUERY_ERROR',
      `only SELECT (and EXPLAIN of a SELECT) run on a lake; this explains a ${kindOf(inner.statementType)} statement`,
    );
  }
}

async function prepareOne(connection: DuckDBConnection, sql: string): Promise<DuckDBPreparedStatement> {
  const extracted = await connection.extractStatements(sql);
  if (extracted.count !== 1) {
    throw new BagError('QUERY_ERROR', `a query is one SQL statement; this text has ${extracted.count}`);
  }
  return extracted.prepare(0);
}

function kindOf(type: StatementType): string {
  return StatementType[type] ?? String(type);
}
