import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  BagError,
  BagReader,
  type BackendPurpose,
  detectBackend,
  extensionOf,
  findBackend,
  registeredExtensions,
  type ReaderOptions,
} from '@vlink/bag';
import { stemOf } from '@vlink/bag-core/internal';
import { confirm } from './confirm.js';
import { CliError } from './errors.js';
import { realPathOf } from './real-path.js';
import { isSplit, numberedSegmentFiles, segmentExtension, segmentsOf } from './split-output.js';

let s3Registered = false;

/** True for an object-storage url (`s3://bucket/key`), which verbs read, write and serve through `@vlink/bag-s3`. */
export function isUrl(path: string): boolean {
  return /^s3:\/\//i.test(path);
}

/**
 * Makes `s3://` urls readable, listable and writable (`@vlink/bag-s3`, endpoint and credentials from the `AWS_*`
 * variables); loaded only when such a url is given, so local verbs do not pay for it.
 */
export async function ensureUrlSchemes(path: string): Promise<void> {
  if (!isUrl(path) || s3Registered) return;
  const { registerS3 } = await import('@vlink/bag-s3');
  registerS3();
  s3Registered = true;
}

/** Fails with one clear line unless `path` has an extension a registered backend reads (or writes). */
export function assertSupported(path: string, purpose: BackendPurpose = 'write'): void {
  if (findBackend(path, purpose)) return;
  const ext = extensionOf(path);
  const readOnly = purpose === 'write' && findBackend(path, 'read') ? `; ${ext} is read-only` : '';
  throw new CliError(
    `unsupported bag extension "${ext || '(none)'}"${readOnly} (supported: ${registeredExtensions(purpose).join(', ')})`,
    path,
  );
}

/**
 * Opens an existing bag, turning "missing", "a directory" and "wrong extension" into one-line errors. A file or
 * directory without a known extension is opened when a backend recognises its content (MCAP magic, a rosbag2 folder).
 */
export async function openBag(path: string, options: ReaderOptions = {}): Promise<BagReader> {
  if (isUrl(path)) {
    await ensureUrlSchemes(path);
    return BagReader.create(path, options);
  }
  let stats: ReturnType<typeof statSync>;
  try {
    stats = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? 'no such file' : `cannot open: ${(error as Error).message}`, path);
  }
  // Opening a FIFO blocks until something writes to it; a device reads forever.
  if (!stats.isDirectory() && !stats.isFile())
    throw new CliError('is not a regular file (a FIFO, device or socket): refused', path);
  let backend: Awaited<ReturnType<typeof detectBackend>>;
  try {
    backend = await detectBackend(path);
  } catch (error) {
    if (stats.isDirectory()) throw new CliError('is a directory, not a bag file', path);
    if (BagError.isInstance(error) && error.code === 'UNSUPPORTED_FORMAT') assertSupported(path, 'read');
    throw error;
  }
  if (stats.isDirectory() && !isBagDirectory(path, backend)) throw new CliError('is a directory, not a bag file', path);
  try {
    return await BagReader.create(path, options);
  } catch (error) {
    if (BagError.isInstance(error)) throw error;
    throw new CliError(`cannot open: ${(error as Error).message}`, path, undefined, { cause: error });
  }
}

/**
 * A directory a backend claimed by its name (`x.db3/`) is a bag only with the backend's marker file in it, or (a
 * rosbag2 recording that crashed before it wrote its metadata.yaml) files its `directoryFiles` names.
 */
function isBagDirectory(path: string, backend: { directoryMarker?: string; directoryFiles?: RegExp }): boolean {
  const { directoryMarker: marker, directoryFiles: files } = backend;
  if (marker && existsSync(join(path, marker))) return true;
  return files !== undefined && readdirSync(path).some((name) => files.test(name));
}

export { realPathOf };

export interface OutputOptions {
  force?: boolean;
  /** Paths the output must not be (the inputs of clone/merge); compared by real path, split segments included. */
  inputs?: readonly string[];
  /** The output is written with `--split-name-by-time` (segment names from times, not from the manifest's name). */
  splitNameByTime?: boolean;
  quiet?: boolean;
}

/** What `prepareOutput` settled: `overwrite` is true when the user allowed replacing files (`--force`, a yes). */
export interface PreparedOutput {
  overwrite: boolean;
}

/**
 * Checks an output path before anything is written: a supported extension, an existing directory, never one of the
 * inputs or their split segments (even with `--force`: a bag cannot be read while it is rewritten), and no silent
 * overwrite (`--force`, or a yes on a terminal). A split output counts every file it would delete or overwrite: the
 * segments an old manifest at its path lists (the writer deletes them, format reference §4.2) and the files at its
 * segments' names. Time-named segments have no name before they are opened: the writer is given `overwriteSegments`
 * = the returned `overwrite`, so one that would land on an existing file fails there instead of replacing it.
 */
export async function prepareOutput(path: string, options: OutputOptions = {}): Promise<PreparedOutput> {
  assertSupported(path);
  // An object is replaced whole when its upload completes (the inputs are read before): nothing to check locally.
  if (isUrl(path)) {
    if ((options.inputs ?? []).includes(path)) throw new CliError('refusing to overwrite the source bag', path);
    await ensureUrlSchemes(path);
    return { overwrite: true };
  }
  const dir = dirname(resolve(path));
  if (!existsSync(dir)) throw new CliError(`directory ${dir} does not exist`, path);
  const target = realPathOf(path);
  const inputs = options.inputs ?? [];
  const protectedFiles = inputs.flatMap((input) => [realPathOf(input), ...segmentsOf(input)]);
  if (protectedFiles.includes(target)) throw new CliError('refusing to overwrite the source bag', path);
  if (isSplit(path)) refuseSplitOverInputs(path, protectedFiles, inputs, options.splitNameByTime === true);
  if (existsSync(path) && statSync(path).isDirectory()) throw new CliError('is a directory', path);
  // What writing `path` replaces: the file itself, and the files at its numbered segment names.
  const replaced = [
    ...(existsSync(path) ? [path] : []),
    ...(options.splitNameByTime ? [] : numberedSegmentFiles(path).map((file) => basename(file))),
  ];
  if (replaced.length === 0 || options.force) return { overwrite: options.force === true };
  const what = replaced.length === 1 ? `${replaced[0]} exists` : `${replaced.join(', ')} exist`;
  if (process.stdin.isTTY && process.stderr.isTTY && !options.quiet) {
    if (await confirm(`${what}. Overwrite? [y/N] `)) return { overwrite: true };
    throw new CliError('not overwritten', path);
  }
  if (replaced[0] === path) throw new CliError('already exists (pass -f/--force to overwrite)', path);
  throw new CliError(
    `${what} and a segment of it would overwrite ${replaced.length === 1 ? 'it' : 'them'} (pass -f/--force to overwrite)`,
    path,
  );
}

/**
 * A split output never deletes or overwrites a file being read: neither the segments an old manifest at its path
 * lists (deleted when the new recording starts) nor the names its own segments get.
 */
function refuseSplitOverInputs(
  path: string,
  protectedFiles: readonly string[],
  inputs: readonly string[],
  byTime: boolean,
): void {
  for (const old of segmentsOf(path)) {
    if (!protectedFiles.includes(old)) continue;
    // The input itself, or one of its segments (then named with the input it belongs to).
    const owner = inputs.some((input) => realPathOf(input) === old)
      ? undefined
      : inputs.find((input) => segmentsOf(input).includes(old));
    const of = owner === undefined ? '' : ` (a segment of ${owner})`;
    throw new CliError(
      `refusing to overwrite the source bag: the existing ${basename(path)} lists ${basename(old)}${of}, which writing ${basename(path)} would delete; write to another name`,
      path,
    );
  }
  // A split output names its segments `<stem>.N.<ext>` (or by time with -o) next to its manifest; none of them
  // may land on a segment being read.
  const realDir = realPathOf(dirname(resolve(path)));
  const segmentExt = segmentExtension(path);
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const ownName = byTime
    ? new RegExp(`^\\d{4}-\\d{2}-\\d{2}_.*${escapeRegExp(segmentExt)}$`, 'i')
    : new RegExp(`^${escapeRegExp(stemOf(basename(path)))}\\.\\d+${escapeRegExp(segmentExt)}$`, 'i');
  for (const file of protectedFiles) {
    const name = basename(file);
    if (dirname(file) === realDir && ownName.test(name)) {
      throw new CliError(
        `its segments could overwrite ${name} of a source bag; write to another directory${byTime ? ' or drop --split-name-by-time' : ''}`,
        path,
      );
    }
  }
}
