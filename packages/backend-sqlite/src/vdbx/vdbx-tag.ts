import { BagError, parseManifest } from '@vlink/bag-core';
import { nodeSplitFiles, retagManifest, splitPath, type SplitFiles } from '@vlink/bag-core/internal';
import type { SqliteDriver } from '../driver/driver.js';
import { tagVdb } from '../vdb/maintenance.js';

/**
 * VLink `tag(name)` for a `.vdbx`: every listed segment's header, then the manifest's `VLinkHeader.tag`. All segments
 * must exist before anything is changed (a missing one is `NOT_FOUND`).
 */
export async function tagVdbx(driver: SqliteDriver, path: string, name: string, files?: SplitFiles): Promise<boolean> {
  const fs = files ?? (await nodeSplitFiles());
  if (fs.size(path) < 0) throw new BagError('NOT_FOUND', 'no such .vdbx manifest', { file: path });
  const manifest = parseManifest(fs.readText(path), path, 'vdbx');
  const { dir } = splitPath(path);
  const segments = manifest.files.map((file) => dir + file);
  for (const segment of segments) {
    if (fs.size(segment) < 0)
      throw new BagError('NOT_FOUND', 'segment listed in the manifest does not exist', { file: segment });
  }
  let ok = true;
  for (const segment of segments) ok = tagVdb(driver, segment, name) && ok;
  await retagManifest(path, name, fs);
  return ok;
}
