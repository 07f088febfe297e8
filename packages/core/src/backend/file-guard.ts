import { BagError } from '../errors.js';

/** What a checked file is to the bag: the bag itself, one of its split segments, or a sidecar (a SQLite journal). */
export type GuardedRole = 'bag' | 'segment' | 'sidecar';

export interface FileGuardOptions {
  /** The directory the file must resolve into (`ReaderOptions.confineTo`); undefined = anywhere. */
  confineTo?: string | undefined;
  role?: GuardedRole;
}

type Fs = typeof import('node:fs');
let fsModule: Promise<Fs | undefined> | undefined;

/** `node:fs` (Node, Bun, Deno) loaded on first use, so core still loads where it does not exist (browsers). */
function loadFs(): Promise<Fs | undefined> {
  fsModule ??= import('node:fs').then(
    (fs) => fs,
    () => undefined,
  );
  return fsModule;
}

/**
 * Refuses a file a reader must not open: anything but a regular file (opening a FIFO blocks forever, a device reads
 * without end) and, with `confineTo`, a file whose real path (symbolic links resolved) leaves that directory. The
 * bag itself that is missing or outside answers `NOT_FOUND`, one that cannot be reached (a symbolic link loop)
 * `IO_ERROR` and a non-regular one `INVALID_ARGUMENT`; a segment or sidecar that is either makes the bag unreadable
 * as stored (`CORRUPT_FILE`).
 */
export async function guardFile(path: string, options: FileGuardOptions = {}): Promise<void> {
  const fs = await loadFs();
  if (!fs) return;
  const role = options.role ?? 'bag';
  let stats: import('node:fs').Stats;
  try {
    stats = fs.statSync(path);
  } catch (error) {
    // A path that is there but cannot be followed (a symlink loop, no permission) is not called missing.
    const code = (error as { code?: string }).code;
    const missing = code === 'ENOENT' || code === 'ENOTDIR';
    throw new BagError(
      role === 'bag' ? (missing ? 'NOT_FOUND' : 'IO_ERROR') : 'CORRUPT_FILE',
      missing ? `no such ${role} file` : `cannot open the ${role} file (${code ?? 'unknown error'})`,
      { file: path, cause: error },
    );
  }
  if (!stats.isFile()) {
    throw new BagError(
      role === 'bag' ? 'INVALID_ARGUMENT' : 'CORRUPT_FILE',
      `the ${role} is a ${kindOf(stats)}, not a regular file: refused`,
      { file: path },
    );
  }
  if (options.confineTo === undefined) return;
  const realpath = fs.realpathSync.native ?? fs.realpathSync;
  let real: string;
  let root: string;
  try {
    real = realpath(path);
    root = realpath(options.confineTo);
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', `cannot resolve the ${role} file`, { file: path });
  }
  if (!isInside(root, real)) {
    throw new BagError(
      role === 'bag' ? 'NOT_FOUND' : 'CORRUPT_FILE',
      `the ${role} resolves outside the directory the reader is confined to (a symbolic link): refused`,
      { file: path },
    );
  }
}

/**
 * Checks the sidecar files next to `path` that a library may open on its own (SQLite's `-journal`, `-wal`, `-shm`):
 * each one that exists must pass `guardFile` as a sidecar. Missing ones are fine.
 */
export async function guardSidecars(path: string, suffixes: readonly string[], confineTo?: string): Promise<void> {
  const fs = await loadFs();
  if (!fs) return;
  for (const suffix of suffixes) {
    const sidecar = path + suffix;
    try {
      fs.lstatSync(sidecar);
    } catch {
      continue;
    }
    await guardFile(sidecar, { confineTo, role: 'sidecar' });
  }
}

/** True when `real` is `root` itself or below it (both real paths). */
export function isInside(root: string, real: string): boolean {
  if (real === root) return true;
  const sep = root.includes('\\') && !root.includes('/') ? '\\' : '/';
  const prefix = root.endsWith(sep) ? root : root + sep;
  return real.startsWith(prefix);
}

function kindOf(stats: import('node:fs').Stats): string {
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'FIFO';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'special file';
}
