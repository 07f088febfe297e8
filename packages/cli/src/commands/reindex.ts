import type { Command } from 'commander';
import { openBag } from '../lib/bag-io.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { printJson } from '../lib/json-schemas.js';
import { liveOutput, StepBar } from '../lib/progress.js';

export function registerReindex(program: Command): void {
  const command = program
    .command('reindex')
    .description('rebuild the indexes of a bag (.vdb: idx_elapsed_url; .vcap: summary and message indexes)')
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcap, .vcapx)')
    .option('--json', 'print the result ({path, ok}) as JSON')
    .option('-q, --quiet', 'print nothing on success')
    .action(async (path: string, flags: { quiet?: boolean; json?: boolean }) => {
      const reader = await openBag(path, { readOnly: false });
      try {
        // Core reports the reindex in steps (.vdb: index statements; .vcap: bytes per chunk; split: segments).
        const bar = new StepBar(liveOutput(flags.quiet || flags.json), `reindex ${path}`);
        let ok = false;
        try {
          const onProgress = bar.onProgress;
          ok = await reader.reindex(onProgress ? { onProgress } : {});
        } finally {
          bar.stop();
        }
        if (!ok) throw new CliError('reindex failed', path);
        if (flags.json) printJson({ path, ok: true });
        else if (!flags.quiet) process.stdout.write(`${path}: reindexed\n`);
      } finally {
        reader.close();
      }
    });
  examples(command, ['vlink-bag reindex /tmp/bag.vdb', 'vlink-bag reindex /tmp/bag.vcap']);
}
