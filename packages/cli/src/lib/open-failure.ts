import { BagError, type CheckProblem, type CheckReport } from '@vlink/bag';
import { CliError, EXIT_USAGE, errorLine } from './errors.js';

/**
 * The `--json` documents of `check` and `fix` when the bag cannot even be opened (a `.vdb` SQLite refuses, a split
 * manifest naming a missing segment, a repair that fails): a script reading `--json` must get a verdict with the
 * place of the damage, as for a bag that opens and fails its check, not an empty stdout and a stderr line.
 */

/** The error as one check problem: the file it names (else `path`), and the offset and url it carries. */
export function problemOf(error: unknown, path: string): CheckProblem {
  if (BagError.isInstance(error)) {
    return {
      file: error.file ?? path,
      // a BagError of an older copy of the package has no detail
      message: error.detail ?? error.message,
      ...(error.offset === undefined ? {} : { offset: error.offset }),
      ...(error.url === undefined ? {} : { url: error.url }),
    };
  }
  if (error instanceof CliError) return { file: error.file ?? path, message: error.message };
  const file = (error as NodeJS.ErrnoException | undefined)?.path ?? path;
  // errorLine puts the file first; the problem names it in `file` instead.
  const line = errorLine(error, file);
  return { file, message: line.startsWith(`${file}: `) ? line.slice(file.length + 2) : line };
}

/** A mistyped command line is not a verdict on the bag: it gets no document, only its usage error (exit 2). */
export function isVerdict(error: unknown): boolean {
  return !(error instanceof CliError && error.exitCode === EXIT_USAGE);
}

/** `check --json` of a bag that does not open: not ok, no frames read, the reason as its one problem. */
export function unopenedCheckReport(error: unknown, path: string, quick: boolean): CheckReport {
  return { ok: false, path, quick, frames: 0, problems: [problemOf(error, path)], moreProblems: 0 };
}

/** `fix --json` when the repair fails: not ok, nothing rewritten, the reason with its place. */
export function failedFixReport(
  error: unknown,
  path: string,
): { path: string; ok: false; rewritten: false; problems: CheckProblem[] } {
  return { path, ok: false, rewritten: false, problems: [problemOf(error, path)] };
}
