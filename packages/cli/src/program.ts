import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import { registerAlign } from './commands/align.js';
import { registerCat } from './commands/cat.js';
import { registerCheck } from './commands/check.js';
import { registerClone } from './commands/clone.js';
import { registerExport } from './commands/export.js';
import { registerFix, registerRecover } from './commands/fix.js';
import { registerIndex } from './commands/index-catalog.js';
import { registerInfo } from './commands/info.js';
import { registerMerge } from './commands/merge.js';
import { registerPlay } from './commands/play.js';
import { registerQuery } from './commands/query.js';
import { registerRecord } from './commands/record.js';
import { registerReindex } from './commands/reindex.js';
import { registerReport } from './commands/report.js';
import { registerServe } from './commands/serve.js';
import { registerSplit } from './commands/split.js';
import { registerTrigger } from './commands/trigger.js';
import { registerTag } from './commands/tag.js';

export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * The `vlink-bag` program: one commander command per verb (each in `commands/`). Commander errors are thrown
 * (`exitOverride`) so `run()` prints every failure the same way; it writes help and usage errors itself.
 */
export function createProgram(): Command {
  const program = new Command('vlink-bag')
    .description('Record, replay, inspect and convert VLink bags (.vdb/.vdbx SQLite, .vcap/.vcapx MCAP)')
    .version(CLI_VERSION, '-V, --version')
    .option('--verbose', 'print stack traces with errors')
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({ outputError: usageLine('vlink-bag') });
  for (const register of [
    registerInfo,
    registerReport,
    registerCat,
    registerRecord,
    registerPlay,
    registerClone,
    registerMerge,
    registerCheck,
    registerReindex,
    registerFix,
    registerTag,
    registerServe,
    registerSplit,
    registerRecover,
    registerTrigger,
    registerAlign,
    registerQuery,
    registerIndex,
    registerExport,
  ]) {
    register(program);
  }
  // Positional options: a verb's flags after it are its own (`trigger dump --json` is the client's, not the
  // daemon's); so every verb also takes the global --verbose.
  program.enablePositionalOptions();
  const withSubcommands = program.commands.flatMap((command) => [command, ...command.commands]);
  for (const command of withSubcommands) {
    const name = command.parent === program ? command.name() : `${command.parent?.name()} ${command.name()}`;
    command
      .addOption(new Option('--verbose', 'print stack traces with errors').hideHelp())
      .exitOverride()
      .configureOutput({ outputError: usageLine(`vlink-bag ${name}`) });
  }
  program.addHelpText(
    'after',
    '\nRun `vlink-bag <command> --help` for the flags and examples of a command.\n' +
      'Times are seconds since recording start; frame timestamps (NDJSON) are microseconds.\n',
  );
  return program;
}

/** Usage errors: one line, prefixed like every other error (`vlink-bag play: option '-r …' is invalid …`). */
function usageLine(prefix: string): (text: string, write: (text: string) => void) => void {
  return (text, write) =>
    write(
      `${prefix}: ${text
        .replace(/^error: /, '')
        .replace(/\s*\n\s*/g, ' ')
        .trim()}\n`,
    );
}
