import { realpath, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { BagError, registeredExtensions, registeredFolderMarkers, registeredNumberedExtensions } from '@vlink/bag';
import { listLocalBagFiles, segmentsOfManifests } from '@vlink/bag-core/internal';
import { type FoundBag, groupSplitRecordings } from './found-bag.js';

/** An index must be whole: past this many files it stops with LIMIT_REACHED instead of a partial catalog. */
const MAX_FILES = 1_000_000;

/**
 * Every bag under a local folder, recursively, by extension (every extension a registered backend reads), and every
 * bag folder (a rosbag2 folder is one bag). Symlinks are
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
  const files = await listLocalBagFiles(realRoot, {
    extensions: new Set(registeredExtensions('read')),
    numberedExtensions: new Set(registeredNumberedExtensions()),
    folderMarkers: registeredFolderMarkers(),
    maxFiles: MAX_FILES,
    onTooMany: 'throw',
    onUnreadable: 'throw',
  });
  return groupSplitRecordings(
    files.map((file) => ({
      bagId: relative(realRoot, file.realPath).split(sep).join('/'),
      location: file.realPath,
      size: file.size,
      mtimeMs: file.mtimeMs,
      etag: null,
    })),
    await segmentsOfManifests(files),
  );
}
