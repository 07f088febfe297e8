import type { Command } from 'commander';
import { openBag } from '../lib/bag-io.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';

export function registerReindex(program: Command): void {
  const command = program
    .command('reindex')
    .description('rebuild the indexes of a bag (.vdb: idx_elapsed_url; .vcap: summary and message indexes)')
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .option('-q, --quiet', 'print nothing on success')
    .action(async (path: string, flags: { quiet?: boolean }) => {
      const reader = await openBag(path, { readOnly: false });
      try {
        if (!(await reader.reindex())) throw new CliError('reindex failed', path);
        if (!flags.quiet) process.stdout.write(`${path}: reindexed\n`);
      } finally {
        reader.close();
      }
    });
  examples(command, ['vlink-bag reindex /tmp/bag.vdb', 'vlink-bag reindex /tmp/bag.vcap']);
}
