import type { Command } from 'commander';
import { openBag } from '../lib/bag-io.js';
import { confirm } from '../lib/confirm.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';

export function registerFix(program: Command): void {
  const command = program
    .command('fix')
    .description(
      'repair a bag that was not closed cleanly (.vdb: recount urls and header from the rows; .vcap: rewrite it keeping every intact chunk)',
    )
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .option('-y, --yes', 'do not ask for confirmation on a terminal')
    .option('--rebuild', '.vdb: also VACUUM and reindex; .vcap: rewrite even a file that passes check')
    .option('-q, --quiet', 'print nothing on success')
    .action(async (path: string, flags: { yes?: boolean; rebuild?: boolean; quiet?: boolean }) => {
      const reader = await openBag(path, { readOnly: false, tryToFix: true });
      try {
        if (!flags.yes && process.stdin.isTTY && process.stderr.isTTY) {
          const what = flags.rebuild ? 'rewrite its metadata and rebuild it' : 'rewrite its metadata';
          if (!(await confirm(`Fix ${path}? This will ${what}. [y/N] `)))
            throw new CliError('not fixed (not confirmed)', path);
        }
        if (!(await reader.fix(flags.rebuild === true)))
          throw new CliError('fix failed: the file could not be repaired', path);
        if (!flags.quiet) process.stdout.write(`${path}: fixed${flags.rebuild ? ' and rebuilt' : ''}\n`);
      } finally {
        reader.close();
      }
    });
  examples(command, ['vlink-bag fix /tmp/broken.vdb', 'vlink-bag fix -y --rebuild /tmp/broken.vdb']);
}
