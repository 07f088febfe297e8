import type { BackendWriter, RecordingContext, ResolvedWriterConfig } from '@vlink/bag-core';
import { openMcapFileWriter, PlainMcapWriter } from '@vlink/bag-mcap';

/**
 * The writing half of the `.mcap` backend: `@vlink/bag-mcap`'s `PlainMcapWriter` (profile-neutral MCAP with the
 * well-known encodings) on a file. Reading `.mcap` stays with `McapForeignReader`; see ARCHITECTURE.md.
 */
export function createPlainMcapWriter(
  path: string,
  config: ResolvedWriterConfig,
  context: RecordingContext,
): Promise<BackendWriter> {
  return openMcapFileWriter(
    path,
    (writable, codecs) => new PlainMcapWriter({ writable, codecs, config, context, file: path }),
  );
}
