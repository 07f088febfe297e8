import { constants, lstatSync, readdirSync } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { BagError } from '../errors.js';
import { listedSegments } from '../split/manifest-parse.js';
import { extensionOf, numberedSegmentExtensionOf } from './registry.js';

/** A bag found under a local folder: the path as walked (through symlinks) and the file (or bag folder) it is. */
export interface LocalBagFile {
  linkPath: string;
  realPath: string;
  /** A bag folder: the bytes of its files; their latest change. */
  size: number;
  mtimeMs: number;
  /** A bag folder (rosbag2): the backend that reads it, by its marker file (`registeredFolderMarkers()`). */
  folderFormat?: string;
}

export interface LocalBagFileOptions {
  /** The extensions that make a file a bag (`registeredExtensions()`). */
  extensions: ReadonlySet<string>;
  /** Those that also do with a segment number after them, `x.record.00000` (`registeredNumberedExtensions()`). */
  numberedExtensions?: ReadonlySet<string>;
  /**
   * Marker files that make a folder one bag (`registeredFolderMarkers()`: rosbag2's `metadata.yaml`): such a folder
   * is listed as a bag and not looked into, so its storage files are not bags of their own.
   */
  folderMarkers?: ReadonlyMap<string, string>;
  /** Most files looked at (bags or not). */
  maxFiles: number;
  /** Past `maxFiles`: stop with what was found (a server's listing) or throw LIMIT_REACHED (an index must be whole). */
  onTooMany: 'stop' | 'throw';
  /** A folder that cannot be read: skipped (a listing shows what it can) or an error (an index must be whole). */
  onUnreadable: 'skip' | 'throw';
  /** Folder depth below the root; default 32 (a tree of recordings, not a whole disk). */
  maxDepth?: number;
}

/** Manifests are small JSON files; anything bigger is not read as one. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
/** Read-only, and non-blocking where the platform has it: opening a FIFO for reading would block. */
const NON_BLOCKING_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** True when `realPath` is `realRoot` or below it (both real paths; a sibling sharing the prefix is not inside). */
export function isInsideRoot(realRoot: string, realPath: string): boolean {
  const prefix = realRoot.endsWith(sep) ? realRoot : realRoot + sep;
  return realPath === realRoot || realPath.startsWith(prefix);
}

/**
 * Every file under `realRoot` (a real path) whose extension is a bag's, recursively and sorted by name, following
 * symlinks only while they stay inside the root and visiting each real folder once; what `vlink-bag serve` lists and
 * `vlink-bag index` catalogs. Segments of split recordings are still in the list: see {@link segmentsOfManifests}.
 */
export async function listLocalBagFiles(realRoot: string, options: LocalBagFileOptions): Promise<LocalBagFile[]> {
  const { extensions, numberedExtensions, folderMarkers, maxFiles, onTooMany, onUnreadable, maxDepth = 32 } = options;
  const isBag = (name: string) =>
    extensions.has(extensionOf(name)) || numberedExtensions?.has(numberedSegmentExtensionOf(name) ?? '') === true;
  const found: LocalBagFile[] = [];
  const visited = new Set<string>([realRoot]);
  let seen = 0;
  let stopped = false;
  async function walk(dir: string, real: string, depth: number): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch (error) {
      if (onUnreadable === 'throw') throw BagError.wrap(error, 'IO_ERROR', `cannot read the folder ${dir}`);
      return;
    }
    const folderFormat = depth > 0 ? folderFormatOf(names, folderMarkers) : undefined;
    if (folderFormat !== undefined) {
      seen += names.length;
      found.push({ linkPath: dir, realPath: real, ...bagFolderFacts(real, names), folderFormat });
      return;
    }
    for (const name of names) {
      if (stopped) return;
      if (++seen > maxFiles) {
        if (onTooMany === 'throw')
          throw new BagError('LIMIT_REACHED', `more than ${maxFiles} files under ${realRoot}: list its subfolders`);
        stopped = true;
        return;
      }
      const linkPath = join(dir, name);
      const real = await realpath(linkPath).catch(() => undefined);
      if (!real || !isInsideRoot(realRoot, real)) continue;
      const info = await stat(real).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) {
        if (depth < maxDepth && !visited.has(real)) {
          visited.add(real);
          await walk(linkPath, real, depth + 1);
        }
      } else if (info.isFile() && isBag(name)) {
        found.push({ linkPath, realPath: real, size: info.size, mtimeMs: info.mtimeMs });
      }
    }
  }
  await walk(realRoot, realRoot, 0);
  return found;
}

/** The backend name of a bag folder whose entries are `names`, or undefined when none of them is a marker. */
export function folderFormatOf(
  names: readonly string[],
  markers: ReadonlyMap<string, string> | undefined,
): string | undefined {
  if (!markers || markers.size === 0) return undefined;
  for (const name of names) {
    const format = markers.get(name);
    if (format !== undefined) return format;
  }
  return undefined;
}

/**
 * A bag folder's size and change time: the sum and the latest of its regular files (one level: rosbag2 keeps its
 * storage files beside `metadata.yaml`). Links are not followed: a listing must not report the size of a file a link
 * points at outside the served folder. Synchronous: a handful of `lstat`s, also on a server's resolve path.
 */
export function bagFolderFacts(
  realDir: string,
  names: readonly string[] = readdirSync(realDir),
): {
  size: number;
  mtimeMs: number;
} {
  let size = 0;
  let mtimeMs = 0;
  for (const name of names) {
    try {
      const info = lstatSync(join(realDir, name));
      if (!info.isFile()) continue;
      size += info.size;
      mtimeMs = Math.max(mtimeMs, info.mtimeMs);
    } catch {
      // gone meanwhile: not part of the bag any more
    }
  }
  return { size, mtimeMs };
}

/**
 * The real paths of the segments the split-recording manifests among `files` list (`VLinkFiles`), keyed by the
 * manifest's real path: a split recording is its manifest, its segments are no bags of their own. Files that are
 * not manifests (decided by a sniff of their first bytes, so big binary bags are never read whole) are left out.
 */
export async function segmentsOfManifests(files: readonly LocalBagFile[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const file of files) {
    const text = await manifestText(file.realPath);
    if (text === undefined) continue;
    const names = listedSegments(text)?.names ?? [];
    const dir = dirname(file.realPath);
    const reals = await Promise.all(names.map((n) => realpath(join(dir, n)).catch(() => undefined)));
    out.set(
      file.realPath,
      reals.filter((r): r is string => r !== undefined),
    );
  }
  return out;
}

/**
 * The text of a VLink manifest, or undefined for anything else or what cannot be read (opening the bag then says
 * why). Opened non-blocking and checked through the handle, so a file swapped for a FIFO after the walk's `stat`
 * cannot block a thread of the I/O pool.
 */
async function manifestText(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, NON_BLOCKING_READ);
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
    const head = new Uint8Array(256);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const text = new TextDecoder()
      .decode(head.subarray(0, bytesRead))
      .replace(/^\uFEFF/, '')
      .replace(/\s+/g, '');
    if (!text.startsWith('{"VLinkHeader"')) return undefined;
    const whole = new Uint8Array(info.size);
    const { bytesRead: all } = await handle.read(whole, 0, whole.length, 0);
    return new TextDecoder().decode(whole.subarray(0, all));
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}
