import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { BagError, guardFile } from '@vlink/bag-core';
import { parseMetadataYaml, type Ros2Metadata } from './metadata-yaml.js';
import { ROS2_STORAGE_FILE } from './storage-file.js';

/**
 * Where a storage file listed in `relative_file_paths` is. rosbag2 resolves the paths of metadata versions 1–3
 * against the folder's parent (they start with the folder's name, `bag/bag_0.db3`), later ones against the folder.
 * A bag folder that was renamed, or a later file with such a path (rosbag2's reindexer wrote them), still holds the
 * file under its own name: that is where it is looked for when the path rosbag2 would take does not exist.
 */
function storageFile(folder: string, relative: string, version: number): string {
  const stated = join(version < 4 ? dirname(folder) : folder, relative);
  if (existsSync(stated)) return stated;
  return join(folder, basename(relative));
}

export interface Located {
  metadata: Ros2Metadata | undefined;
  files: string[];
  identifier: string;
  /** A folder without metadata.yaml (a recording that crashed before rosbag2 wrote it): its files were listed. */
  unindexed: boolean;
}

/** The storage files of a bag folder or a single `.db3`, with the folder's `metadata.yaml` when there is one. */
export async function locate(path: string, confineTo: string | undefined): Promise<Located> {
  let directory: boolean;
  try {
    directory = statSync(path).isDirectory();
  } catch (error) {
    throw new BagError('NOT_FOUND', 'no such bag', { file: path, cause: error });
  }
  const folder = directory ? path : dirname(path);
  const yamlPath = join(folder, 'metadata.yaml');
  let metadata: Ros2Metadata | undefined;
  if (existsSync(yamlPath)) {
    // Served (`confineTo`): what the metadata says reaches clients, so it must not be a link out of the folder.
    if (confineTo !== undefined) await guardFile(yamlPath, { confineTo, role: 'sidecar' });
    metadata = parseMetadataYaml(readFileSync(yamlPath, 'utf8'), yamlPath);
  } else if (directory) return unindexedFolder(path);
  if (!directory) {
    // A single storage file: the folder's metadata describes it only when it lists it.
    if (metadata && !metadata.relativeFilePaths.some((p) => basename(p) === basename(path))) metadata = undefined;
    const identifier = path.toLowerCase().endsWith('.mcap') ? 'mcap' : 'sqlite3';
    return { metadata, files: [path], identifier, unindexed: false };
  }
  const m = metadata!;
  const files = m.relativeFilePaths.map((name) => storageFile(folder, name, m.version));
  for (const file of files)
    if (!existsSync(file)) throw new BagError('NOT_FOUND', `storage file ${basename(file)} is missing`, { file: path });
  if (files.length === 0)
    throw new BagError('CORRUPT_FILE', 'metadata.yaml lists no storage files', { file: yamlPath });
  return { metadata: m, files, identifier: m.storageIdentifier || 'sqlite3', unindexed: false };
}

/**
 * A folder without metadata.yaml: rosbag2 writes it only when a recording closes. Its storage files, in the order of
 * their numbers (`bag_2` before `bag_10`), as `ros2 bag reindex` orders them to rebuild it.
 */
function unindexedFolder(path: string): Located {
  const names = readdirSync(path).filter((name) => ROS2_STORAGE_FILE.test(name));
  if (names.length === 0)
    throw new BagError('NOT_FOUND', 'a rosbag2 folder needs its metadata.yaml (and this one holds no storage file)', {
      file: path,
    });
  const numberOf = (name: string) => Number(ROS2_STORAGE_FILE.exec(name)![1]);
  names.sort((a, b) => numberOf(a) - numberOf(b) || (a < b ? -1 : a > b ? 1 : 0));
  const kinds = new Set(names.map((name) => ROS2_STORAGE_FILE.exec(name)![2]!.toLowerCase()));
  if (kinds.size > 1)
    throw new BagError('CORRUPT_FILE', 'a rosbag2 folder without metadata.yaml holds both .db3 and .mcap files', {
      file: path,
    });
  const identifier = kinds.has('mcap') ? 'mcap' : 'sqlite3';
  return { metadata: undefined, files: names.map((name) => join(path, name)), identifier, unindexed: true };
}
