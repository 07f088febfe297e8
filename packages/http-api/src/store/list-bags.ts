import { relative, sep } from 'node:path';
import { registeredExtensions, registeredFolderMarkers, registeredNumberedExtensions } from '@vlink/bag';
import { listLocalBagFiles, segmentsOfManifests } from '@vlink/bag-core/internal';
import type { ResolvedBag } from './resolve-id.js';

/** A served tree is a directory of recordings, not a whole disk: past this many files the listing stops. */
const MAX_FILES = 100_000;

/**
 * Every file under `realRoot` whose extension is registered, and every bag folder (a rosbag2 folder: one bag, its
 * storage files not listed on their own), recursively, following symlinks only while they stay
 * inside the root (ids are the paths as walked). Segments of a split recording (`drive.1.vdb` listed in
 * `drive.vdbx`'s `VLinkFiles`) are left out: the manifest stands for the recording. A folder that cannot be read is
 * skipped: the listing shows what it can.
 */
export async function findBags(realRoot: string): Promise<ResolvedBag[]> {
  const files = await listLocalBagFiles(realRoot, {
    extensions: new Set(registeredExtensions()),
    numberedExtensions: new Set(registeredNumberedExtensions()),
    folderMarkers: registeredFolderMarkers(),
    maxFiles: MAX_FILES,
    onTooMany: 'stop',
    onUnreadable: 'skip',
  });
  const segments = new Set([...(await segmentsOfManifests(files)).values()].flat());
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
