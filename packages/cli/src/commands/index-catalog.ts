import type { Command } from 'commander';
import { examples } from '../lib/filter-flags.js';
import { printJson } from '../lib/json-schemas.js';

interface IndexFlags {
  output: string;
  json?: boolean;
  quiet?: boolean;
}

export function registerIndex(program: Command): void {
  const command = program
    .command('index')
    .description(
      'write a catalog of the bags under folders or s3:// prefixes (bags.parquet: one row per bag; urls.parquet: one per bag × url), incrementally',
    )
    .argument('<source...>', 'folders (searched recursively) or s3://bucket/prefix')
    .requiredOption('-o, --output <catalog-dir>', 'catalog folder (created; its Parquet files are replaced whole)')
    .option('--json', 'print the report (counts and failures) as JSON')
    .option('-q, --quiet', 'print nothing but failures')
    .action(async (sources: string[], flags: IndexFlags) => {
      // DuckDB is loaded only by the verbs that need it: `vlink-bag` itself starts without it.
      const { indexBags } = await import('@vlink/bag-lake');
      const report = await indexBags(sources, flags.output);
      // A bag that cannot be read is an error of the run (exit 1), the catalog is still written for the others.
      if (report.failed.length > 0) process.exitCode = 1;
      if (flags.json) {
        printJson(report);
        return;
      }
      for (const failure of report.failed)
        process.stderr.write(`vlink-bag index: ${failure.location}: ${failure.code}: ${failure.message}\n`);
      if (flags.quiet) return;
      process.stdout.write(
        `${report.catalog}: ${report.bags} bags, ${report.urls} urls (added ${report.added}, updated ${report.updated}, unchanged ${report.unchanged}, removed ${report.removed}, failed ${report.failed.length})\n`,
      );
    });
  examples(command, [
    'vlink-bag index /data/recordings -o /data/catalog',
    'vlink-bag index s3://fleet/2026/ -o ./catalog --json',
  ]);
}
