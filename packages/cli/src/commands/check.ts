import type { Command } from 'commander';
import { openBag } from '../lib/bag-io.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';

export function registerCheck(program: Command): void {
  const command = program
    .command('check')
    .description(
      'verify a bag (.vdb: SQLite integrity and metadata; .vcap: records, CRCs, summary and metadata); exit 0 when ok',
    )
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .option('-q, --quiet', 'print nothing when the bag is ok')
    .action(async (path: string, flags: { quiet?: boolean }) => {
      const reader = await openBag(path);
      try {
        if (!(await reader.check())) {
          throw new CliError(
            'check failed: the file is damaged, incomplete or its metadata is inconsistent (vlink-bag fix may repair it)',
            path,
          );
        }
        if (!flags.quiet) process.stdout.write(`${path}: ok\n`);
      } finally {
        reader.close();
      }
    });
  examples(command, ['vlink-bag check /tmp/bag.vdb', 'vlink-bag check -q /tmp/bag.vcap && echo fine']);
}
