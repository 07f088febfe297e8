import { existsSync, writeFileSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { CliError, usageError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { parseNonNegativeInteger, parsePositive } from '../lib/parse.js';

const QUERY_FORMATS = ['table', 'csv', 'json', 'ndjson', 'parquet'] as const;
type QueryFormat = (typeof QUERY_FORMATS)[number];

/**
 * The most rows, as JSON bytes, a text answer holds: it is made in memory and printed as one string, so past this a
 * query stops (LIMIT_REACHED) instead of running the process out of heap or past a JS string's length. Larger
 * answers go to Parquet (`-o x.parquet`), which DuckDB writes itself.
 */
export const QUERY_ANSWER_BYTES = 128 * 1024 * 1024;

interface QueryFlags {
  catalog?: string;
  export?: string;
  format?: QueryFormat;
  output?: string;
  force?: boolean;
  limit?: number;
  timeout?: number;
  json?: boolean;
}

const BY_EXTENSION: Record<string, QueryFormat> = {
  '.csv': 'csv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.parquet': 'parquet',
  '.txt': 'table',
};

/** `--format`, else the extension of `-o`, else a table on stdout. */
export function queryFormatOf(flags: Pick<QueryFlags, 'format' | 'output'>): QueryFormat {
  if (flags.format) return flags.format;
  if (flags.output) return BY_EXTENSION[extname(flags.output).toLowerCase()] ?? 'table';
  return 'table';
}

export function registerQuery(program: Command): void {
  const command = program
    .command('query')
    .description(
      'run one SQL SELECT with DuckDB over a catalog (views bags, urls) and a Parquet export (view messages); files outside them cannot be read',
    )
    .argument('<sql>', 'one SELECT (or EXPLAIN) statement')
    .option('--catalog <dir>', 'a catalog folder written by vlink-bag index (bags.parquet, urls.parquet)')
    .option('--export <dir>', 'an export folder written by vlink-bag export --format parquet (messages/…)')
    .addOption(
      new Option('--format <format>', 'output format (default: from -o, else table)').choices([...QUERY_FORMATS]),
    )
    .option('-o, --output <file>', 'write the answer to a file (needed for parquet) instead of stdout')
    .option('-f, --force', 'overwrite an existing output file')
    .addOption(
      new Option('--limit <rows>', 'keep at most this many rows (says so when more were left out)').argParser(
        parseNonNegativeInteger,
      ),
    )
    .addOption(new Option('--timeout <seconds>', 'interrupt the query after this long').argParser(parsePositive))
    .option('--json', 'print the answer as one JSON document {columns: [{name, type}], rows, truncated}');
  command.action((sql: string, flags: QueryFlags) => runQuery(sql, flags));
  examples(command, [
    'vlink-bag query "SELECT url, avg(rate_hz) FROM urls GROUP BY url" --catalog fleet/catalog',
    `vlink-bag query "SELECT bag_id, count(*) FROM messages WHERE url = '/lidar' GROUP BY bag_id" --export fleet/export --format csv`,
    'vlink-bag query "SELECT * FROM bags" --catalog fleet/catalog -o bags.parquet',
  ]);
}

async function runQuery(sql: string, flags: QueryFlags): Promise<void> {
  if (flags.catalog === undefined && flags.export === undefined) {
    throw usageError('give --catalog <dir> and/or --export <dir>: the folders the views bags, urls and messages read');
  }
  const format = flags.json ? 'json' : queryFormatOf(flags);
  if (format === 'parquet' && flags.output === undefined) throw usageError('--format parquet needs -o <file>');
  const output = flags.output === undefined ? undefined : resolve(flags.output);
  if (output !== undefined && existsSync(output) && !flags.force) {
    throw new CliError('exists; use --force to overwrite', flags.output);
  }
  // Loaded on demand: DuckDB is a native library other verbs do not need.
  const lake = await import('@vlink/bag-lake');
  const opened = await lake.openLake({
    ...(flags.catalog === undefined ? {} : { catalog: flags.catalog }),
    ...(flags.export === undefined ? {} : { export: flags.export }),
    ...(format === 'parquet' && output !== undefined ? { outputFiles: [output] } : {}),
  });
  const options = flags.timeout === undefined ? {} : { timeoutMs: flags.timeout * 1000 };
  try {
    if (format === 'parquet') {
      if (output === undefined) throw usageError('--format parquet needs -o <file>');
      if (flags.limit !== undefined) sql = `SELECT * FROM (${sql}) LIMIT ${flags.limit}`;
      const rows = await opened.writeParquet(sql, output, options);
      process.stderr.write(`${rows} row${rows === 1 ? '' : 's'} written to ${flags.output}\n`);
      return;
    }
    const result = await opened.query(sql, {
      ...options,
      maxBytes: QUERY_ANSWER_BYTES,
      ...(flags.limit === undefined ? {} : { limit: flags.limit }),
    });
    const text = flags.json
      ? `${JSON.stringify({ columns: result.columns, rows: result.rows, truncated: result.truncated })}\n`
      : lake.formatResult(result, format);
    if (output === undefined) process.stdout.write(text);
    else writeFileSync(output, text);
    if (result.truncated && format !== 'table' && !flags.json) {
      process.stderr.write(`only the first ${result.rows.length} rows: more were left out (--limit)\n`);
    }
  } finally {
    opened.close();
  }
}
