import type { Command } from 'commander';
import { infoProblems, type Info, type ReaderOptions } from '@vlink/bag';

/** `--try-to-fix`: the reader option `tryToFix` of the verbs that read a bag through (info, cat, clone, merge, split). */
export interface RecoveryFlags {
  tryToFix?: boolean;
}

/**
 * Readers refuse a damaged or unclosed file with `CORRUPT_FILE` ("… open with tryToFix to read …"); this flag is that
 * way in from the command line. What a format's recovery reads around (an unclosed ROS 1 bag's missing index, a
 * ULog's damaged stretches, an Apollo record cut in a chunk, a `.vcap` without its summary) is listed in the bag's
 * metadata (`*.problems`, shown by `info`, and by the verbs that copy frames as warnings: `readAroundWarnings`), so
 * nothing is skipped silently. It changes no file, except a `.vdb` left
 * with an unfinished transaction, which SQLite's own recovery rolls back (what any writer opening it would do).
 */
export function addRecoveryOption(command: Command): Command {
  return command.option(
    '--try-to-fix',
    'open a damaged or unclosed bag as far as its format can be read (what is read around is listed by info)',
  );
}

export function recoveryReaderOptions(flags: RecoveryFlags): ReaderOptions {
  return flags.tryToFix === true ? { tryToFix: true } : {};
}

/**
 * What a `--try-to-fix` read of a bag went around (its reader's `infoProblems`), one warning each: a copy, a merge or
 * a `cat` of a recovered bag says what it left out (before, only `info` did; `clone --try-to-fix` of a ROS 1 bag
 * with one chunk that did not read said "75 frames cloned", not that 16 were left out).
 */
export function readAroundWarnings(flags: RecoveryFlags, info: Info): string[] {
  return flags.tryToFix === true ? infoProblems(info).map((problem) => `read around damage: ${problem}`) : [];
}
