import { BagError, isRemotePath, openByteSourceSync, type ReaderOptions, type UrlMeta } from '@vlink/bag-core';
import { SplitReader, type SplitFiles } from '@vlink/bag-core/internal';
import type { SqliteDriver } from '../driver/driver.js';
import { guardSqliteFiles } from '../vdb/file-guard.js';
import { openVdbReader } from '../vdb/read-around.js';

/**
 * Opens a `.vdbx` as one bag (format reference §4.4): core's `SplitReader` over one `VdbReader` per segment, so each segment's
 * url ids resolve through its own `VLinkUrls` and its own indexes decide its read order.
 */
export function openVdbx(
  driver: SqliteDriver,
  path: string,
  options: ReaderOptions & { files?: SplitFiles } = {},
): Promise<SplitReader> {
  return SplitReader.open(
    path,
    {
      flavor: 'vdbx',
      storageType: 'SQLite3',
      segmentExtension: '.vdb',
      openSegment: async (segment, segmentOptions) => {
        await guardSqliteFiles(segment, segmentOptions, 'segment');
        return openVdbReader(driver, segment, segmentOptions);
      },
      // Opening a segment when a read reaches it: behind a url through its local copy (SQLite needs a file).
      openSegmentSync: (segment, segmentOptions) =>
        openVdbReader(driver, isRemotePath(segment) ? localCopySync(segment) : segment, segmentOptions),
      guardSegment: (segment, segmentOptions) => guardSqliteFiles(segment, segmentOptions, 'segment'),
      sortUrls: byUrlThenIndex,
    },
    options,
  );
}

/** A segment behind a url copied into the source's bounded local cache at once. */
function localCopySync(url: string): string {
  const source = openByteSourceSync(url);
  try {
    if (!source.localCopySync)
      throw new BagError('NOT_SUPPORTED', 'a .vdb is read from local files, and this source has no local copy', {
        file: url,
      });
    return source.localCopySync('.vdb');
  } finally {
    source.close();
  }
}

/** The `.vdb` reader's url order (VLink's transport priority has no meaning here). */
function byUrlThenIndex(urls: UrlMeta[]): UrlMeta[] {
  return [...urls].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.index - b.index));
}
