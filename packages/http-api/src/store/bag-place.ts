import { realpathSync, statSync } from 'node:fs';
import {
  BagError,
  type ByteSource,
  bagExtensionOf,
  extensionOf,
  isRemotePath,
  listUrl,
  openByteSource,
  type ReaderOptions,
  registeredExtensions,
} from '@vlink/bag';
import { findBags, type NotManifests } from './list-bags.js';
import { isSafeRelative, resolveBagId, type ResolvedBag } from './resolve-id.js';

/**
 * Where the served bags are: a local directory, or a url prefix of a registered scheme (`s3://bucket/prefix`). The
 * server lists and resolves bags only through this seam, so it has no branch for any kind of storage.
 */
export interface BagPlace {
  /** The served root: a real local path, or the url prefix (no trailing `/`). Never shown to clients. */
  readonly root: string;
  /** Uploads write into a local root; a url root is read-only. */
  readonly writable: boolean;
  /**
   * Whether the bag workers can open these bags themselves: a url scheme is registered on the server's thread only,
   * so a url root's bags are read there (each range request then holds that thread for its duration).
   */
  readonly inWorkers: boolean;
  /** Every bag under the root, split segments left out (the manifest stands for the recording). */
  list(): Promise<ResolvedBag[]>;
  /** A client's id to a bag under the root; `NOT_FOUND` (the same for every refusal) otherwise. */
  resolve(id: string): ResolvedBag;
  /** How readers of this place's bags are opened (a local root confines them to itself). */
  readonly readerOptions: ReaderOptions;
}

/** The place for `root`: a url of a registered scheme, else a local directory (which must exist). */
export function placeOf(root: string): BagPlace {
  if (typeof root !== 'string' || root.length === 0)
    throw new BagError('INVALID_ARGUMENT', 'root must be a directory path or a url prefix');
  return isRemotePath(root) ? urlPlace(root.replace(/\/+$/, '')) : localPlace(realRootOf(root));
}

function localPlace(realRoot: string): BagPlace {
  const notManifests: NotManifests = new Map();
  return {
    root: realRoot,
    writable: true,
    inWorkers: true,
    list: () => findBags(realRoot, notManifests),
    resolve: (id) => resolveBagId(realRoot, id),
    readerOptions: { confineTo: realRoot },
  };
}

/**
 * A url prefix: one listing answers `/v1/bags` (and is remembered for the sizes and times of later ids); an id is
 * resolved without a request (the open says when the object is missing: `NOT_FOUND`).
 */
/** Manifests are small JSON files; anything bigger is not read as one. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

function urlPlace(root: string): BagPlace {
  const extensions = new Set(registeredExtensions());
  let known = new Map<string, ResolvedBag>();
  return {
    root,
    writable: false,
    inWorkers: false,
    async list() {
      const entries = (await listUrl(`${root}/`)).filter((e) => extensions.has(bagExtensionOf(e.url)));
      const bags = entries.map((e) => ({
        id: e.url.slice(root.length + 1),
        path: e.url,
        size: e.size,
        mtimeMs: e.mtimeMs,
      }));
      const segments = new Set<string>();
      for (const bag of bags) for (const segment of await listedSegmentUrls(bag.path)) segments.add(segment);
      // Every key the listing found is a bag, `a/./b.vcap` and `a//b.vcap` too (an object store's keys are names, not
      // paths, and `index` catalogs them alike); such an id is served because the listing named it.
      const found = bags.filter((bag) => !segments.has(bag.path));
      known = new Map(found.map((bag) => [bag.id, bag]));
      return found;
    },
    resolve(id) {
      const listed = known.get(id);
      if (listed) return listed;
      // An id the last listing did not name must be a plain relative path: no client-made `..` walks the bucket.
      if (!isSafeRelative(id)) throw new BagError('NOT_FOUND', `no such bag "${id}"`);
      return { id, path: `${root}/${id}`, size: 0, mtimeMs: 0 };
    },
    readerOptions: {},
  };
}

/** The urls of the segments a split-recording manifest lists; empty for anything else (or a manifest that fails). */
async function listedSegmentUrls(url: string): Promise<string[]> {
  if (!extensionOf(url).endsWith('x')) return [];
  let source: ByteSource | undefined;
  try {
    source = await openByteSource(url);
    if (!source || source.size() > MAX_MANIFEST_BYTES) return [];
    const doc = JSON.parse(new TextDecoder().decode(source.read(0, source.size()))) as { VLinkFiles?: unknown };
    if (!Array.isArray(doc.VLinkFiles)) return [];
    const dir = url.slice(0, url.lastIndexOf('/') + 1);
    return doc.VLinkFiles.filter((n): n is string => typeof n === 'string' && n !== '' && !n.includes('/')).map(
      (n) => dir + n,
    );
  } catch {
    return [];
  } finally {
    source?.close();
  }
}

function realRootOf(root: string): string {
  try {
    const real = realpathSync(root);
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
    return real;
  } catch (error) {
    throw new BagError('NOT_FOUND', `root ${root} is not a readable directory`, { cause: error });
  }
}
