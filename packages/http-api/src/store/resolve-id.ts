import { readdirSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { BagError, registeredFolderMarkers } from '@vlink/bag';
import { bagFolderFacts, folderFormatOf } from '@vlink/bag-core/internal';

/**
 * Synchronous on purpose: two local syscalls take microseconds, while the promise versions cost a thread-pool round
 * trip each and dominated small requests (≈ 3× slower `info`). `native` is libc realpath where the runtime has it.
 */
const realpath: (path: string) => string = realpathSync.native ?? realpathSync;

/** A bag id resolved to a regular file, or a bag folder (rosbag2), inside the served root. */
export interface ResolvedBag {
  /** The id as the client sent it (relative to root, `/`-separated). */
  id: string;
  /** Real path (symlinks resolved), always inside the root. */
  path: string;
  size: number;
  mtimeMs: number;
  /** A bag folder: the backend that reads it (the format a file's extension says otherwise). */
  format?: string;
}

/** Everything that is not a plain relative path of plain names is refused before touching the file system. */
export function isSafeRelative(id: string): boolean {
  if (id.length === 0 || id.length > 4096 || id.includes('\0') || id.includes('\\')) return false;
  if (isAbsolute(id) || /^[a-zA-Z]:/.test(id)) return false;
  return id.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

export function isInside(realRoot: string, realPath: string): boolean {
  const prefix = realRoot.endsWith(sep) ? realRoot : realRoot + sep;
  return realPath.startsWith(prefix);
}

/**
 * Resolves an id to a file or a bag folder under `realRoot` (which must itself be a real path). Traversal (`..`,
 * absolute paths, symlinks leading outside the root), other directories and missing files all answer NOT_FOUND with the same message, so
 * a client cannot probe what exists outside the root.
 */
export function resolveBagId(realRoot: string, id: string): ResolvedBag {
  const notFound = () => new BagError('NOT_FOUND', `no such bag "${id}"`);
  if (!isSafeRelative(id)) throw notFound();
  let real: string;
  let info: ReturnType<typeof statSync>;
  try {
    real = realpath(join(realRoot, id));
    if (!isInside(realRoot, real)) throw notFound();
    info = statSync(real);
  } catch {
    throw notFound();
  }
  if (info.isFile()) return { id, path: real, size: info.size, mtimeMs: info.mtimeMs };
  if (!info.isDirectory()) throw notFound();
  let names: string[];
  try {
    names = readdirSync(real);
  } catch {
    throw notFound();
  }
  const format = folderFormatOf(names, registeredFolderMarkers());
  if (format === undefined) throw notFound();
  return { id, path: real, ...bagFolderFacts(real, names), format };
}
