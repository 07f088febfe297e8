import { relative, sep } from 'node:path';
import { registeredExtensions, registeredFolderMarkers, registeredNumberedExtensions } from '@vlink/bag';
import { type LocalBagFile, listLocalBagFiles, segmentsOfManifests } from '@vlink/bag-core/internal';
import type { ResolvedBag } from './resolve-id.js';

/** A served tree is a directory of recordings, not a whole disk: past this many files the listing stops. */
export const MAX_LISTED_FILES = 100_000;
/**
 * Files sniffed at once for a manifest's first bytes (open, stat, read, close: four thread-pool round trips each).
 * One after the other they took 3.6 s for 20,000 bags; side by side they keep libuv's thread pool busy instead.
 */
const SNIFF_CONCURRENCY = 16;

/**
 * The files a walk found that are not split-recording manifests, by real path, with the version (size and mtime) that
 * was sniffed: the next walk sniffs only new and changed files. Holds what the last walk found, nothing more.
 */
export type NotManifests = Map<string, string>;

/**
 * Every file under `realRoot` whose extension is registered, and every bag folder (a rosbag2 folder: one bag, its
 * storage files not listed on their own), recursively, following symlinks only while they stay
 * inside the root (ids are the paths as walked). Segments of a split recording (`drive.1.vdb` listed in
 * `drive.vdbx`'s `VLinkFiles`) are left out: the manifest stands for the recording. A folder that cannot be read is
 * skipped: the listing shows what it can. `notManifests` (kept by the caller between walks) spares re-reading the
 * first bytes of files that were no manifest at the same version.
 */
export async function findBags(realRoot: string, notManifests: NotManifests = new Map()): Promise<ResolvedBag[]> {
  const files = await listLocalBagFiles(realRoot, {
    extensions: new Set(registeredExtensions()),
    numberedExtensions: new Set(registeredNumberedExtensions()),
    folderMarkers: registeredFolderMarkers(),
    maxFiles: MAX_LISTED_FILES,
    onTooMany: 'stop',
    onUnreadable: 'skip',
  });
  const segments = await segmentsOf(files, notManifests);
  return files
    .filter((file) => !segments.has(file.realPath))
    .map((file) => ({
      id: relative(realRoot, file.linkPath).split(sep).join('/'),
      path: file.realPath,
      size: file.size,
      mtimeMs: file.mtimeMs,
      ...(file.folderFormat === undefined ? {} : { format: file.folderFormat }),
    }));
}

/** The real paths of the segments the manifests among `files` list; updates `notManifests` to this walk's files. */
async function segmentsOf(files: readonly LocalBagFile[], notManifests: NotManifests): Promise<Set<string>> {
  const version = (file: LocalBagFile) => `${file.size}:${file.mtimeMs}`;
  const unknown = files.filter((file) => notManifests.get(file.realPath) !== version(file));
  const groups = Array.from({ length: Math.min(SNIFF_CONCURRENCY, unknown.length) }, (_, g) =>
    unknown.filter((_, i) => i % SNIFF_CONCURRENCY === g),
  );
  const manifests = new Map<string, string[]>();
  for (const found of await Promise.all(groups.map((group) => segmentsOfManifests(group))))
    for (const [manifest, listed] of found) manifests.set(manifest, listed);
  notManifests.clear();
  for (const file of files) if (!manifests.has(file.realPath)) notManifests.set(file.realPath, version(file));
  return new Set([...manifests.values()].flat());
}
