import { BagError } from '@vlink/bag';

/** Exit codes: 0 ok, 1 the operation failed (or a check said "not ok"), 2 the command line was wrong. */
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * An error the CLI reports as one line: `vlink-bag <verb>: <file>: <reason>`. Commands throw it (or let a `BagError`
 * through); the entry point prints it and exits with `exitCode`.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly file?: string,
    readonly exitCode = EXIT_FAILURE,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'CliError';
  }
}

/** A usage error (bad flag value, missing argument) that commander did not catch itself. */
export function usageError(message: string): CliError {
  return new CliError(message, undefined, EXIT_USAGE);
}

/**
 * Formats any error as the single line the CLI prints. A `BagError` names its file in a `(file …)` suffix; that
 * suffix is moved to the front so every line reads `<file>: <reason>`. `fallbackFile` names the file the command was
 * working on when the error itself does not.
 */
export function errorLine(error: unknown, fallbackFile?: string): string {
  const { file: named, reason } = errorParts(error);
  const file = named ?? fallbackFile;
  const line = file !== undefined && !reason.includes(file) ? `${file}: ${reason}` : reason;
  return line.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * The error with what became of the command's output said after its reason (`…; the partial output x.vdb was
 * removed`): the same file leads the line, the same exit status, the error itself kept as the cause.
 */
export function withNote(error: unknown, note: string): CliError {
  const { file, reason } = errorParts(error);
  const exitCode = error instanceof CliError ? error.exitCode : EXIT_FAILURE;
  return new CliError(`${reason}; ${note}`, file, exitCode, { cause: error });
}

/** The file an error names (if any) and its reason, as `errorLine` prints them. */
function errorParts(error: unknown): { file: string | undefined; reason: string } {
  let file: string | undefined;
  let reason: string;
  if (error instanceof CliError) {
    file = error.file;
    reason = error.message;
  } else if (BagError.isInstance(error)) {
    file = error.file;
    // The file leads the line; offset and url stay in the reason's suffix, as in the message.
    const where = [
      ...(error.offset === undefined ? [] : [`offset ${error.offset}`]),
      ...(error.url === undefined ? [] : [`url ${error.url}`]),
    ];
    const detail = error.detail ?? error.message; // a BagError of an older copy of the package has no detail
    reason = where.length === 0 ? detail : `${detail} (${where.join(', ')})`;
  } else if (error instanceof Error) {
    reason = systemReason(error);
    file = (error as NodeJS.ErrnoException).path;
  } else {
    reason = String(error);
  }
  return { file, reason };
}

/** The stack and cause chain, for `--verbose`. */
export function errorDetails(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current !== undefined && depth < 8; depth++) {
    if (current instanceof Error) parts.push((depth > 0 ? 'caused by: ' : '') + (current.stack ?? current.message));
    else parts.push((depth > 0 ? 'caused by: ' : '') + String(current));
    current = current instanceof Error ? current.cause : undefined;
  }
  return parts.join('\n');
}

const ERRNO_TEXT: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
  ENOSPC: 'no space left on device',
  EEXIST: 'already exists',
  EADDRINUSE: 'address already in use',
  ECONNREFUSED: 'connection refused',
};

function systemReason(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ERRNO_TEXT[code]) return ERRNO_TEXT[code]!;
  return error.message;
}
