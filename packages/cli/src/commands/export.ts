import { Option, type Command } from 'commander';
import { examples } from '../lib/filter-flags.js';
import { usageError } from '../lib/errors.js';
import { printJson } from '../lib/json-schemas.js';

interface ExportFlags {
  format: 'parquet';
  output: string;
  rowGroupRows?: string;
  decode: boolean;
  jsonNames?: boolean;
  json?: boolean;
  quiet?: boolean;
}

export function registerExport(program: Command): void {
  const command = program
    .command('export')
    .description(
      'export the messages of bags as a hive-partitioned Parquet dataset (messages/url=…/date=…/part-*.parquet) for Spark, DuckDB, pandas; resumable',
    )
    .argument('<bags...>', 'bag files, s3://bucket/key urls, or a catalog folder (bags.parquet of `vlink-bag index`)')
    .addOption(new Option('--format <format>', 'output format').choices(['parquet']).default('parquet'))
    .requiredOption('-o, --output <dir>', 'export folder (a rerun skips the bags it already holds)')
    .option('--row-group-rows <n>', 'rows per part file and row group (default 100000)')
    .option('--no-decode', 'no `data` STRUCT of decoded fields (payload only)')
    .option('--json-names', 'protobuf fields by their JSON name (json_name, else lowerCamelCase)')
    .option('--json', 'print the report as JSON')
    .option('-q, --quiet', 'no per-bag lines on stderr')
    .action(async (bags: string[], flags: ExportFlags) => {
      // DuckDB is loaded only by this verb, so `vlink-bag` itself starts without it.
      const { exportMessages } = await import('@vlink/bag-lake');
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      const rowGroupRows = flags.rowGroupRows === undefined ? undefined : Number(flags.rowGroupRows);
      if (rowGroupRows !== undefined && !(Number.isInteger(rowGroupRows) && rowGroupRows > 0))
        throw usageError(`--row-group-rows must be a positive integer (got "${flags.rowGroupRows}")`);
      try {
        const report = await exportMessages(bags, flags.output, {
          decode: flags.decode,
          jsonNames: flags.jsonNames === true,
          signal: controller.signal,
          ...(rowGroupRows !== undefined ? { rowGroupRows } : {}),
          onBag: (bag) => {
            if (flags.quiet || flags.json) return;
            let what = bag.skipped ? 'already exported' : `${bag.messages} messages, ${bag.files} files`;
            if (bag.replaced)
              what += ` (replacing its earlier export, ${bag.discardedFiles} files: the bag or its id changed since)`;
            process.stderr.write(`${bag.bagId}: ${what}\n`);
          },
        });
        const stale = report.staleLock;
        if (stale && !flags.quiet) {
          process.stderr.write(
            `warning: took over the lock of an export that no longer runs (pid ${stale.pid} on ${stale.host}, started ${stale.started}); what it left unfinished was exported again\n`,
          );
        }
        if (flags.json) printJson(report);
        else if (!flags.quiet) {
          process.stdout.write(
            `${report.bags} bags (${report.skipped} already exported): ${report.messages} messages, ${report.files} files, ${report.bytes} bytes in ${report.outDir}\n`,
          );
        }
        if (report.decodeFailures > 0 && !flags.quiet) {
          const urls = Object.entries(report.perUrl)
            .filter(([, url]) => url.decodeFailures > 0)
            .map(([url, entry]) => `${url} (${entry.decodeFailures})`);
          process.stderr.write(
            `warning: ${report.decodeFailures} messages did not decode (exported with data NULL): ${urls.join(', ')}\n`,
          );
        }
        if (report.droppedFields > 0 && !flags.quiet) {
          const urls = Object.entries(report.perUrl)
            .filter(([, url]) => url.droppedFields > 0)
            .map(([url, entry]) => `${url} (${entry.droppedFields})`);
          process.stderr.write(
            `warning: ${report.droppedFields} messages had decoded fields their url's data STRUCT could not take (kept in payload): ${urls.join(', ')}\n`,
          );
        }
        if (report.textReplaced > 0 && !flags.quiet) {
          const urls = Object.entries(report.perUrl)
            .filter(([, url]) => url.textReplaced > 0)
            .map(([url, entry]) => `${url} (${entry.textReplaced})`);
          process.stderr.write(
            `warning: ${report.textReplaced} messages held lone UTF-16 surrogates, written to data as U+FFFD (payload kept as recorded): ${urls.join(', ')}\n`,
          );
        }
      } finally {
        process.off('SIGINT', stop);
      }
    });
  examples(command, [
    'vlink-bag export /data/*.vcap --format parquet -o /data/lake',
    'vlink-bag export /data/catalog --format parquet -o /data/lake --json',
    'vlink-bag export s3://fleet/bags/run1.vdb -o /data/lake',
  ]);
}
