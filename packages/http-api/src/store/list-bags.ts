import { constants } from 'node:fs';
import { open, readdir, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { extensionOf, registeredExtensions } from '@vlink/bag';
import { isInside, type ResolvedBag } from './resolve-id.js';

/** Walk limits: a served tree is expected to be a directory of recordings, not a whole disk. */
const MAX_DEPTH = 32;
const MAX_FILES = 100_000;
/** Manifests are small JSON files; anything bigger is not read as one. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;
/** Read-only, and non-blocking where the platform has it (opening a FIFO for reading would block). */
const NON_BLOCKING_READ = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/**
 * Every file under `realRoot` whose extension is registered, recursively, following symlinks only while they stay
 * inside the root. Segments of a split recording (`drive.1.vdb` listed in `drive.vdbx`'s `VLinkFiles`) are left out:
 * the manifest stands for the recording.
 */
export async function findBags(realRoot: string): Promise<ResolvedBag[]> {
  const extensions = new Set(registeredExtensions());
  const found: ResolvedBag[] = [];
  const visited = new Set<string>([realRoot]);
  let files = 0;

  async function walk(dir: string, depth: number): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (++files > MAX_FILES) return;
      const linkPath = join(dir, name);
      const real = await realpath(linkPath).catch(() => undefined);
      if (!real || !isInside(realRoot, real)) continue;
      const info = await stat(real).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) {
        if (depth < MAX_DEPTH && !visited.has(real)) {
          visited.add(real);
          await walk(linkPath, depth + 1);
        }
      } else if (info.isFile() && extensions.has(extensionOf(name))) {
        const id = relative(realRoot, linkPath).split(sep).join('/');
        found.push({ id, path: real, size: info.size, mtimeMs: info.mtimeMs });
      }
    }
  }

  await walk(realRoot, 0);
  const segments = new Set<string>();
  for (const bag of found) for (const segment of await manifestSegments(bag.path)) segments.add(segment);
  return found.filter((bag) => !segments.has(bag.path));
}

/** Real paths of the segments a split-recording manifest lists; empty for anything that is not a manifest. */
async function manifestSegments(path: string): Promise<string[]> {
  const text = await manifestText(path);
  if (text === undefined) return [];
  try {
    const doc = JSON.parse(text) as { VLinkFiles?: unknown };
    if (!Array.isArray(doc.VLinkFiles)) return [];
    const dir = dirname(path);
    const names = doc.VLinkFiles.filter(
      (n): n is string => typeof n === 'string' && n !== '' && !/[\\/]/.test(n) && n !== '.' && n !== '..',
    );
    const reals = await Promise.all(names.map((n) => realpath(join(dir, n)).catch(() => undefined)));
    return reals.filter((r): r is string => r !== undefined);
  } catch {
    return [];
  }
}

/**
 * The text of a VLink manifest, or undefined for anything else, decided by a cheap sniff (first bytes: a manifest
 * starts with `{"VLinkHeader"`) so big binary bags are never read whole. Opened non-blocking and checked through the
 * handle, so a file swapped for a FIFO after the walk's `stat` cannot block a thread of the I/O pool.
 */
async function manifestText(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, NON_BLOCKING_READ);
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_MANIFEST_BYTES) return undefined;
    const head = new Uint8Array(256);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const text = new TextDecoder().decode(head.subarray(0, bytesRead)).replace(/\s+/g, '');
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
