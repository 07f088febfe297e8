import { existsSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { BagError, BagReader, extensionOf, findBackend, registeredExtensions, type ReaderOptions } from '@vlink/bag';
import { confirm } from './confirm.js';
import { CliError } from './errors.js';

/** Fails with one clear line unless `path` has an extension a registered backend reads and writes. */
export function assertSupported(path: string): void {
  if (findBackend(path)) return;
  const ext = extensionOf(path);
  throw new CliError(
    `unsupported bag extension "${ext || '(none)'}" (supported: ${registeredExtensions().join(', ')})`,
    path,
  );
}

/** Opens an existing bag, turning "missing", "a directory" and "wrong extension" into one-line errors. */
export async function openBag(path: string, options: ReaderOptions = {}): Promise<BagReader> {
  let stats;
  try {
    stats = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? 'no such file' : `cannot open: ${(error as Error).message}`, path);
  }
  if (stats.isDirectory()) throw new CliError('is a directory, not a bag file', path);
  assertSupported(path);
  try {
    return await BagReader.create(path, options);
  } catch (error) {
    if (BagError.isInstance(error)) throw error;
    throw new CliError(`cannot open: ${(error as Error).message}`, path, undefined, { cause: error });
  }
}

/** The real path of a file or, when it does not exist yet, of its directory joined with its name. */
export function realPathOf(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return resolve(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}

export interface OutputOptions {
  force?: boolean;
  /** Paths the output must not be (the inputs of clone/merge); compared by real path. */
  inputs?: readonly string[];
  quiet?: boolean;
}

/**
 * Checks an output path before anything is written: a supported extension, an existing directory, never one of the
 * inputs (even with `--force`: a bag cannot be read while it is rewritten), and no silent overwrite (`--force`, or a
 * yes on a terminal).
 */
export async function prepareOutput(path: string, options: OutputOptions = {}): Promise<void> {
  assertSupported(path);
  const dir = dirname(resolve(path));
  if (!existsSync(dir)) throw new CliError(`directory ${dir} does not exist`, path);
  const target = realPathOf(path);
  for (const input of options.inputs ?? []) {
    if (realPathOf(input) === target) throw new CliError('refusing to overwrite the source bag', path);
  }
  if (!existsSync(path)) return;
  if (statSync(path).isDirectory()) throw new CliError('is a directory', path);
  if (options.force) return;
  if (process.stdin.isTTY && process.stderr.isTTY && !options.quiet) {
    if (await confirm(`${path} exists. Overwrite? [y/N] `)) return;
    throw new CliError('not overwritten', path);
  }
  throw new CliError('already exists (pass -f/--force to overwrite)', path);
}
