import { extensionOf } from '@vlink/bag';
import { listedSegments } from '@vlink/bag-core/internal';

/** A bag found under an indexed root, with what incremental indexing compares (nothing of it is opened yet). */
export interface FoundBag {
  /** Path relative to the root, `/`-separated: the catalog's `bag_id`. */
  bagId: string;
  /** Absolute path or `s3://bucket/key`: what `BagReader.create` opens. */
  location: string;
  /** Bytes of the file, or of every segment of a split recording (as `info`'s `fileSize`). */
  size: number;
  /** mtime / Last-Modified in µs since the Unix epoch (the newest file of a split recording); null when unknown. */
  modifiedUs: number | null;
  /** The S3 ETag (of every object of a split recording, joined by `+`); null for local files. */
  etag: string | null;
}

/** One file (or object) of a listing, before split recordings are grouped. */
export interface ListedFile {
  bagId: string;
  location: string;
  size: number;
  mtimeMs: number;
  etag: string | null;
}

/** Manifests are small JSON files; anything bigger is not read as one. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/**
 * The bare segment names a split-recording manifest (`.vdbx`/`.vcapx`) lists in `VLinkFiles`; empty for anything that
 * is not such a manifest (the reader then says what is wrong with it when the bag is opened).
 */
export function manifestSegmentNames(text: string): string[] {
  return listedSegments(text)?.names ?? [];
}

/** True for a split-recording manifest's extension (`.vdbx`, `.vcapx`). */
export function isManifest(location: string): boolean {
  return extensionOf(location).endsWith('x');
}

/**
 * Groups a listing into bags: a split recording's manifest stands for itself and the segments it lists (their sizes
 * add up; the newest time and every ETag, the manifest's included, count), and the segments are no bags of their own.
 */
export function groupSplitRecordings(
  files: readonly ListedFile[],
  segmentsOf: ReadonlyMap<string, readonly string[]>,
): FoundBag[] {
  const byLocation = new Map(files.map((file) => [file.location, file]));
  const segments = new Set<string>();
  for (const listed of segmentsOf.values()) for (const segment of listed) segments.add(segment);
  const out: FoundBag[] = [];
  for (const file of files) {
    if (segments.has(file.location)) continue;
    const segmentFiles = (segmentsOf.get(file.location) ?? []).flatMap((s) => byLocation.get(s) ?? []);
    const parts = [file, ...segmentFiles];
    const newest = Math.max(...parts.map((p) => p.mtimeMs));
    out.push({
      bagId: file.bagId,
      location: file.location,
      // As `info` counts a split recording: its segments' bytes (the manifest's mtime and ETag still count).
      size: segmentFiles.length > 0 ? segmentFiles.reduce((sum, p) => sum + p.size, 0) : file.size,
      modifiedUs: Number.isFinite(newest) && newest > 0 ? Math.round(newest * 1000) : null,
      etag: file.etag === null ? null : parts.map((p) => p.etag ?? '').join('+'),
    });
  }
  return out.sort((a, b) => (a.bagId < b.bagId ? -1 : a.bagId > b.bagId ? 1 : 0));
}
