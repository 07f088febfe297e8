import { constants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { BagError, extensionOf, registeredExtensions } from '@vlink/bag';
import {
  type FoundBag,
  groupSplitRecordings,
  isManifest,
  type ListedFile,
  MAX_MANIFEST_BYTES,
  manifestSegmentNames,
} from './found-bag.js';

/** Walk limits: an indexed tree is a directory of recordings, not a whole disk (the same bounds as `serve`). */
const MAX_DEPTH = 32;
const MAX_FILES = 1_000_000;
/** Read-only and non-blocking where the platform has it: opening a FIFO for reading would block. */
const NON_BLOCKING_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Every bag under a local folder, recursively, by extension (every extension a registered backend reads). Symlinks are
 * followed while they stay inside the root; a split recording is its manifest (its segments are not bags of their own).
 */
export async function discoverLocal(root: string): Promise<FoundBag[]> {
  const absolute = resolve(root);
  let realRoot: string;
  try {
    realRoot = await realpath(absolute);
    if (!(await stat(realRoot)).isDirectory()) throw new BagError('INVALID_ARGUMENT', 'is not a directory');
  } catch (error) {
    throw BagError.wrap(error, 'NOT_FOUND', `cannot index ${root}: no such directory`, { file: root });
  }
  const extensions = new Set(registeredExtensions('read'));
  const files: ListedFile[] = [];
  const visited = new Set<string>([realRoot]);
  let seen = 0;
  async function walk(dir: string, depth: number): Promise<void> {
    for (const name of (await readdir(dir)).sort()) {
      if (++seen > MAX_FILES)
        throw new BagError('LIMIT_REACHED', `more than ${MAX_FILES} files under ${root}: index its subfolders`);
      const path = join(dir, name);
      const real = await realpath(path).catch(() => undefined);
      if (!real || !(real === realRoot || real.startsWith(realRoot + sep))) continue;
      const info = await stat(real).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) {
        if (depth < MAX_DEPTH && !visited.has(real)) {
          visited.add(real);
          await walk(path, depth + 1);
        }
      } else if (info.isFile() && extensions.has(extensionOf(name))) {
        files.push({
          bagId: relative(realRoot, real).split(sep).join('/'),
          location: real,
          size: info.size,
          mtimeMs: info.mtimeMs,
          etag: null,
        });
      }
    }
  }
  await walk(realRoot, 0);
  const segmentsOf = new Map<string, string[]>();
  for (const file of files) {
    if (!isManifest(file.location)) continue;
    const text = await manifestText(file.location);
    if (text === undefined) continue;
    const dir = file.location.slice(0, file.location.lastIndexOf(sep));
    segmentsOf.set(
      file.location,
      manifestSegmentNames(text).map((name) => join(dir, name)),
    );
  }
  return groupSplitRecordings(files, segmentsOf);
}

/** The text of a manifest, or undefined when it is too big or unreadable (opening the bag then says why). */
async function manifestText(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, NON_BLOCKING_READ);
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
    const whole = new Uint8Array(info.size);
    const { bytesRead } = await handle.read(whole, 0, whole.length, 0);
    return new TextDecoder().decode(whole.subarray(0, bytesRead));
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}
