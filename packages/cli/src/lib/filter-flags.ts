import { Option, type Command } from 'commander';
import { usageError } from './errors.js';
import { parseSeconds } from './parse.js';

/** The play-style filters shared by cat, play, clone and merge: urls and a time window in seconds. */
export interface FilterFlags {
  urls?: string[];
  skipUrls?: string[];
  begin?: number;
  end?: number;
}

export function addFilterOptions(command: Command): Command {
  return command
    .addOption(new Option('-u, --urls <urls...>', 'only these urls (exact match; default: all)'))
    .addOption(new Option('-k, --skip-urls <urls...>', 'leave these urls out (exact match)'))
    .addOption(new Option('-b, --begin <s>', 'window start, seconds since recording start').argParser(parseSeconds))
    .addOption(
      new Option('-e, --end <s>', 'window end, seconds since recording start (inclusive; 0 = to the end)').argParser(
        parseSeconds,
      ),
    );
}

/** The window in ms as the reader takes it (`beginTime`, `endTime`; 0 = open), checked for `end < begin`. */
export function windowMs(flags: FilterFlags): { beginTime: number; endTime: number } {
  const beginTime = Math.round((flags.begin ?? 0) * 1000);
  const endTime = Math.round((flags.end ?? 0) * 1000);
  if (endTime > 0 && endTime < beginTime)
    throw usageError(`--end (${flags.end} s) is before --begin (${flags.begin} s)`);
  return { beginTime, endTime };
}

/** Adds an "Examples:" section to a verb's help. */
export function examples(command: Command, lines: readonly string[]): Command {
  return command.addHelpText('after', `\nExamples:\n${lines.map((line) => `  ${line}`).join('\n')}\n`);
}
