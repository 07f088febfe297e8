import { statSync } from 'node:fs';
import { BagError } from '@vlink/bag-core';
import { bagFolderFacts, segmentsOfManifests } from '@vlink/bag-core/internal';
import { listObjects, parseS3Url, type S3Client } from '@vlink/bag-s3';
import {
  groupSplitRecordings,
  isManifest,
  type ListedFile,
  MAX_MANIFEST_BYTES,
  manifestSegmentNames,
} from '../catalog/found-bag.js';
import type { BagRef } from './bag-list.js';

/**
 * What tells one version of a bag from the next, as the catalog records it (`size_bytes`, `modified`, `etag`,
 * computed the same way: found-bag.ts): a done marker holding other facts than the bag's now is of an older version.
 */
export interface BagFacts {
  size: number;
  modifiedUs: number | null;
  etag: string | null;
}

/** True when both describe the same version of a bag. */
export function sameFacts(a: BagFacts, b: BagFacts): boolean {
  return a.size === b.size && a.modifiedUs === b.modifiedUs && a.etag === b.etag;
}

/**
 * The bag's facts now (the catalog's for an `s3://` bag of a catalog), or undefined when it is gone: a local file
 * or folder by `stat` (a split recording with its segments, a rosbag2 folder with its files), an object by a listing
 * of its key. Taken before the bag is read, so a bag that changes during its export is exported again next time.
 */
export async function bagFacts(ref: BagRef, s3: () => S3Client): Promise<BagFacts | undefined> {
  if (ref.recorded) return ref.recorded;
  try {
    return /^s3:\/\//i.test(ref.key) ? await s3Facts(ref.key, s3()) : await localFacts(ref.key);
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', 'cannot look at the bag', { file: ref.location });
  }
}

async function localFacts(real: string): Promise<BagFacts | undefined> {
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (info.isDirectory()) {
    const { size, mtimeMs } = bagFolderFacts(real);
    return factsOf([{ bagId: '', location: real, size, mtimeMs, etag: null }], new Map());
  }
  const self: ListedFile = { bagId: '', location: real, size: info.size, mtimeMs: info.mtimeMs, etag: null };
  if (!isManifest(real)) return factsOf([self], new Map());
  const segments = (await segmentsOfManifests([{ linkPath: real, realPath: real, ...self }])).get(real) ?? [];
  const files = [self];
  for (const segment of segments) {
    const stat = statSync(segment, { throwIfNoEntry: false });
    if (stat) files.push({ bagId: '', location: segment, size: stat.size, mtimeMs: stat.mtimeMs, etag: null });
  }
  return factsOf(files, new Map([[real, segments]]));
}

async function s3Facts(url: string, client: S3Client): Promise<BagFacts | undefined> {
  const { bucket, key } = parseS3Url(url);
  const listed = async (objectKey: string): Promise<ListedFile | undefined> => {
    const found = (await listObjects(client, bucket, objectKey)).find((o) => o.key === objectKey);
    return found && { bagId: '', location: `s3://${bucket}/${found.key}`, ...found };
  };
  const self = await listed(key);
  if (!self) return undefined;
  if (!isManifest(url) || self.size > MAX_MANIFEST_BYTES) return factsOf([self], new Map());
  const { bytes } = await client.getRange({ bucket, key }, 0, Math.max(1, self.size));
  const dir = key.slice(0, key.lastIndexOf('/') + 1);
  const files = [self];
  const segments: string[] = [];
  for (const name of manifestSegmentNames(new TextDecoder().decode(bytes))) {
    const segment = await listed(dir + name);
    segments.push(`s3://${bucket}/${dir}${name}`);
    if (segment) files.push(segment);
  }
  return factsOf(files, new Map([[self.location, segments]]));
}

/** The facts the catalog would record (found-bag.ts `groupSplitRecordings`, so both agree to the byte). */
function factsOf(files: ListedFile[], segmentsOf: ReadonlyMap<string, readonly string[]>): BagFacts {
  const [bag] = groupSplitRecordings(files, segmentsOf);
  return { size: bag!.size, modifiedUs: bag!.modifiedUs, etag: bag!.etag };
}
