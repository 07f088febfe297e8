import type { ReaderOptions, UrlMeta } from '@vlink/bag-core';
import { retagManifest, SplitReader, type SplitFiles } from '@vlink/bag-core/internal';
import { loadCodecs } from '../codecs.js';
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
