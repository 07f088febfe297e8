import { BagError } from '../errors.js';
import { dumpJson, type JsonValue } from './json-dump.js';
import { MANIFEST_FLOAT_KEYS } from './manifest.js';
import { parseJsonObject } from './manifest-parse.js';
import { isBareFileName, nodeSplitFiles, splitPath, type SplitFiles } from './split-files.js';

/**
 * VLink `tag()` on a split recording's manifest: rewrites `VLinkHeader.tag` and keeps everything else (key order,
 * doubles stay doubles). Returns the paths of the segments it lists, for formats whose segments carry the tag too
 * (`.vdbx`). Throws `NOT_FOUND` / `CORRUPT_FILE` like the reader.
 */
export async function retagManifest(path: string, name: string, files?: SplitFiles): Promise<string[]> {
  const fs = files ?? (await nodeSplitFiles());
  if (fs.size(path) < 0) throw new BagError('NOT_FOUND', 'no such manifest', { file: path });
  const root = parseJsonObject(fs.readText(path), path);
  const header = root['VLinkHeader'];
  if (typeof header !== 'object' || header === null || Array.isArray(header)) {
    throw new BagError('CORRUPT_FILE', 'manifest has no VLinkHeader object', { file: path });
  }
  const listed = Array.isArray(root['VLinkFiles']) ? (root['VLinkFiles'] as unknown[]) : [];
  listed.forEach((entry, i) => {
    if (!isBareFileName(entry)) {
      throw new BagError(
        'CORRUPT_FILE',
        `manifest VLinkFiles[${i}] ${JSON.stringify(entry)} is not a plain file name in the manifest's directory`,
        { file: path },
      );
    }
  });
  (header as Record<string, unknown>)['tag'] = name;
  try {
    fs.writeText(path, dumpJson(root as { [key: string]: JsonValue }, { floatKeys: MANIFEST_FLOAT_KEYS }));
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', 'cannot rewrite the manifest', { file: path });
  }
  const { dir } = splitPath(path);
  return (listed as string[]).map((entry) => dir + entry);
}
