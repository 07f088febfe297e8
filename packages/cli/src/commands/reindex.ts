import type { Command } from 'commander';
import { extensionOf } from '@vlink/bag';
import { openBag } from '../lib/bag-io.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';

export function registerReindex(program: Command): void {
  const command = program
    .command('reindex')
    .description('rebuild the time index of a .vdb (DROP the old indexes, CREATE idx_elapsed_url)')
    .argument('<path>', 'bag file (.vdb)')
    .option('-q, --quiet', 'print nothing on success')
    .action(async (path: string, flags: { quiet?: boolean }) => {
      const reader = await openBag(path, { readOnly: false });
      try {
        if (!(await reader.reindex())) throw new CliError(unsupportedOr(path, 'reindex', 'reindex failed'), path);
        if (!flags.quiet) process.stdout.write(`${path}: reindexed\n`);
      } finally {
        reader.close();
      }
    });
  examples(command, ['vlink-bag reindex /tmp/bag.vdb']);
}

/** The reason a maintenance verb answered false: the format has no such operation, or it failed. */
export function unsupportedOr(path: string, verb: string, failed: string): string {
  const ext = extensionOf(path);
  return ext === '.vcap' || ext === '.vcapx' ? `${verb} is not supported for ${ext} files` : failed;
}
