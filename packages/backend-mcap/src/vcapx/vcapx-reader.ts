import { isRemotePath, openByteSourceSync, type ReaderOptions, type UrlMeta } from '@vlink/bag-core';
import { retagManifest, SplitReader, type SplitFiles } from '@vlink/bag-core/internal';
import { loadCodecs } from '../codecs.js';
import { SourceReadable } from '../io/source-readable.js';
import { VcapReader } from '../vcap/vcap-reader.js';

/**
 * Opens a `.vcapx` as one bag (format reference §6): core's `SplitReader` over one `VcapReader` per segment. Timestamps are put
 * on the first segment's start (VLink's `total_start_timestamp_ns`); each segment's channels resolve through its own
 * `VLinkChannel_*` records.
 */
export async function openVcapx(
  path: string,
  options: ReaderOptions & { files?: SplitFiles } = {},
): Promise<SplitReader> {
  const codecs = await loadCodecs();
  return SplitReader.open(
    path,
    {
      flavor: 'vcapx',
      storageType: 'vcap',
      segmentExtension: '.vcap',
      rebaseOnFirstSegment: true,
      openSegment: async (segment, segmentOptions) => VcapReader.open(segment, segmentOptions, codecs),
      // Opening a segment when a read reaches it: behind a url through its summary and indexes, a range at a time.
      openSegmentSync: (segment, segmentOptions) => {
        if (!isRemotePath(segment)) return VcapReader.open(segment, segmentOptions, codecs);
        const source = openByteSourceSync(segment);
        try {
          return VcapReader.open(segment, segmentOptions, codecs, new SourceReadable(source));
        } catch (error) {
          source.close();
          throw error;
        }
      },
      sortUrls: byIndex,
    },
    options,
  );
}

/** VLink `tag()` for a `.vcapx`: rewrites the manifest's `VLinkHeader.tag` (the segments' headers stay). */
export async function tagVcapx(path: string, name: string, files?: SplitFiles): Promise<boolean> {
  await retagManifest(path, name, files);
  return true;
}

function byIndex(urls: UrlMeta[]): UrlMeta[] {
  return [...urls].sort((a, b) => a.index - b.index);
}
