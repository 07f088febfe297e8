import type { ReaderOptions, UrlMeta } from '@vlink/bag-core';
import { SplitReader, type SplitFiles } from '@vlink/bag-core/internal';
import type { SqliteDriver } from '../driver/driver.js';
import { guardVdbFiles } from '../vdb/file-guard.js';
import { VdbReader } from '../vdb/reader.js';

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
        await guardVdbFiles(segment, segmentOptions, 'segment');
        return VdbReader.open(driver, segment, segmentOptions);
      },
      sortUrls: byUrlThenIndex,
    },
    options,
  );
}

/** The `.vdb` reader's url order (VLink's transport priority has no meaning here). */
function byUrlThenIndex(urls: UrlMeta[]): UrlMeta[] {
  return [...urls].sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.index - b.index));
}
