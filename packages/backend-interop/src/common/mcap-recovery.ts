import type { McapFileReader, Metadata } from '@vlink/bag-mcap';
import { SkippedParts } from './skipped-parts.js';

/**
 * The metadata records of `mcap`, in file order. With `tryToFix` a record that does not read (damaged, or a metadata
 * index of the summary that points elsewhere) is left out and named in `unread`, where reading them all threw and
 * refused the whole file (found by probing: 64 zeroed bytes in a `.mcap`'s summary or in one metadata record, and
 * `tryToFix` read none of its messages).
 */
export function readMetadata(mcap: McapFileReader, tryToFix: boolean): { records: Metadata[]; unread?: string } {
  if (!tryToFix) return { records: mcap.metadata() };
  const records: Metadata[] = [];
  const skipped = new SkippedParts('metadata record(s) that do not read');
  for (const location of [...mcap.metadataLocations].sort((a, b) => a.offset - b.offset)) {
    try {
      records.push(mcap.readMetadata(location));
    } catch (error) {
      skipped.add(error, location.offset);
    }
  }
  return { records, unread: skipped.line() };
}
