import { listUrl, type ByteSource } from '../backend/byte-source.js';
import { BagError } from '../errors.js';
import { splitPath, type SplitFiles } from './split-files.js';

/**
 * The `SplitFiles` of a split recording behind a url (`s3://bucket/dir/drive.vcapx`): the manifest's text read from
 * its source, and one listing of its "directory" (the objects under `dir/`) answering which segments exist and
 * their sizes. Read-only: rewriting the manifest (`fix`, `tag`) of a recording on object storage is refused.
 */
export async function urlSplitFiles(manifest: ByteSource): Promise<SplitFiles> {
  const { dir } = splitPath(manifest.name);
  const sizes = new Map<string, number>();
  for (const entry of await listUrl(dir)) {
    const name = entry.url.slice(dir.length);
    if (entry.url.startsWith(dir) && name !== '' && !name.includes('/')) sizes.set(name, entry.size);
  }
  const text = new TextDecoder().decode(manifest.read(0, manifest.size()));
  sizes.set(splitPath(manifest.name).name, manifest.size());
  const readOnly = (path: string): never => {
    throw new BagError('NOT_SUPPORTED', 'a split recording behind a url is read-only', { file: path });
  };
  const inDir = (path: string): string | undefined => (path.startsWith(dir) ? path.slice(dir.length) : undefined);
  return {
    exists: (path) => sizes.has(inDir(path) ?? '\0'),
    size: (path) => sizes.get(inDir(path) ?? '\0') ?? -1,
    readText(path) {
      if (path !== manifest.name)
        throw new BagError('NOT_SUPPORTED', 'only the manifest is read as text', { file: path });
      return text;
    },
    writeText: readOnly,
    remove: readOnly,
    ensureDir: readOnly,
    list: (listed) => (listed === dir ? [...sizes.keys()] : []),
  };
}
