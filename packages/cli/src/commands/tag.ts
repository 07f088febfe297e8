import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { backendFor, extensionOf } from '@vlink/bag';
import { assertSupported } from '../lib/bag-io.js';
import { CliError } from '../lib/errors.js';
import { examples } from '../lib/filter-flags.js';
import { printJson } from '../lib/json-schemas.js';

export function registerTag(program: Command): void {
  const command = program
    .command('tag')
    .description('set the tag name of a bag (.vdb, .vdbx, .vcapx; a single .vcap has no rewritable tag)')
    .argument('<path>', 'bag file (.vdb, .vdbx, .vcapx)')
    .argument('<name>', 'new tag name')
    .option('--json', 'print the result ({path, tag}) as JSON')
    .option('-q, --quiet', 'print nothing on success')
    .action(async (path: string, name: string, flags: { quiet?: boolean; json?: boolean }) => {
      try {
        if (!statSync(path).isFile()) throw new CliError('is not a file', path);
      } catch (error) {
        if (error instanceof CliError) throw error;
        throw new CliError('no such file', path);
      }
      assertSupported(path);
      const backend = backendFor(path);
      const ext = extensionOf(path);
      if (ext === '.vcap')
        throw new CliError('tagging is not supported for .vcap files (a single .vcap has no rewritable tag)', path);
      if (!backend.tag) throw new CliError(`tagging is not supported for ${ext} files`, path);
      if (!(await backend.tag(path, name))) throw new CliError('tagging failed', path);
      if (flags.json) printJson({ path, tag: name });
      else if (!flags.quiet) process.stdout.write(`${path}: tag set to ${JSON.stringify(name)}\n`);
    });
  examples(command, ["vlink-bag tag /tmp/bag.vdb 'highway_test_20260317'"]);
}
