import { CommanderError } from 'commander';
import { createProgram } from './program.js';
import { verbOf, vlinkFlagAliases } from './lib/aliases.js';
import { CliError, EXIT_FAILURE, EXIT_USAGE, errorDetails, errorLine } from './lib/errors.js';

/**
 * Runs the CLI with `argv` (without `node` and the script) and resolves to the exit code. Every failure is one line
 * on stderr, `vlink-bag <verb>: <file>: <reason>`; `--verbose` adds the stack and causes.
 */
export async function run(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  let verb = '';
  let operand: string | undefined;
  program.hook('preAction', (_program, action) => {
    verb = action.parent && action.parent !== program ? `${action.parent.name()} ${action.name()}` : action.name();
    const first = action.args[0];
    operand = typeof first === 'string' ? first : undefined;
  });
  try {
    verb = verbOf(argv) ?? '';
    await program.parseAsync(vlinkFlagAliases(argv), { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.help' ||
        error.code === 'commander.version'
      )
        return 0;
      // commander already printed its one line (configureOutput); usage errors exit 2.
      return error.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    const prefix = verb ? `vlink-bag ${verb}` : 'vlink-bag';
    const usage = error instanceof CliError && error.exitCode === EXIT_USAGE;
    process.stderr.write(`${prefix}: ${errorLine(error, usage ? undefined : operand)}\n`);
    if (argv.includes('--verbose')) process.stderr.write(`${errorDetails(error)}\n`);
    return error instanceof CliError ? error.exitCode : EXIT_FAILURE;
  }
}
