import { bagExtensionOf, registeredExtensions } from '@vlink/bag';
import { listObjects, parseS3Prefix, type S3Client } from '@vlink/bag-s3';
import {
  type FoundBag,
  groupSplitRecordings,
  isManifest,
  type ListedFile,
  MAX_MANIFEST_BYTES,
  manifestSegmentNames,
} from './found-bag.js';

/**
 * Every bag under `s3://bucket/prefix` (one ListObjectsV2 listing: keys, sizes, Last-Modified and ETags; only the
 * small manifests of split recordings are read). `bag_id` is the key relative to the prefix.
 */
export async function discoverS3(client: S3Client, url: string): Promise<FoundBag[]> {
  const { bucket, key } = parseS3Prefix(url.replace(/\/+$/, ''));
  const prefix = key === '' ? '' : `${key}/`;
  const extensions = new Set(registeredExtensions('read'));
  const files: ListedFile[] = (await listObjects(client, bucket, prefix))
    .filter((o) => extensions.has(bagExtensionOf(o.key)) && !o.key.endsWith('/'))
    .map((o) => ({
      bagId: o.key.slice(prefix.length),
      location: `s3://${bucket}/${o.key}`,
      size: o.size,
      mtimeMs: o.mtimeMs,
      etag: o.etag,
    }));
  const segmentsOf = new Map<string, string[]>();
  for (const file of files) {
    if (!isManifest(file.location) || file.size > MAX_MANIFEST_BYTES) continue;
    const objectKey = file.location.slice(`s3://${bucket}/`.length);
    let text: string;
    try {
      const { bytes } = await client.getRange({ bucket, key: objectKey }, 0, Math.max(1, file.size));
      text = new TextDecoder().decode(bytes);
    } catch {
      continue; // opening the bag says what is wrong with it
    }
    const dir = file.location.slice(0, file.location.lastIndexOf('/') + 1);
    segmentsOf.set(
      file.location,
      manifestSegmentNames(text).map((name) => dir + name),
    );
  }
  return groupSplitRecordings(files, segmentsOf);
}
