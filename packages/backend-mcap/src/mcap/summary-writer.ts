import type { ByteWriter } from './byte-writer.js';
import { Opcode } from './constants.js';
import { crc32 } from './crc32.js';
import {
  writeChannel,
  writeAttachmentIndex,
  writeChunkIndex,
  writeDataEnd,
  writeMagic,
  writeMetadataIndex,
  writeSchema,
  writeStatistics,
  writeSummaryOffset,
  type ChannelFields,
} from './record-encoder.js';
import type { AttachmentIndex, ChunkIndex, MetadataIndex, Schema, Statistics, SummaryOffset } from './records.js';

export interface SummaryContent {
  schemas: Iterable<Omit<Schema, 'type'>>;
  channels: Iterable<ChannelFields>;
  statistics: Omit<Statistics, 'type'>;
  chunkIndexes: Iterable<Omit<ChunkIndex, 'type'>>;
  metadataIndexes: Iterable<Omit<MetadataIndex, 'type'>>;
  attachmentIndexes?: Iterable<Omit<AttachmentIndex, 'type'>>;
  /** CRC-32 of every byte before the DataEnd record (magic included); 0 = not computed. */
  dataSectionCrc?: number;
}

/**
 * Appends the end of an MCAP file to `o`, whose first byte lands at file offset `base`: DataEnd (with
 * `content.dataSectionCrc`, which must already cover whatever `o` holds before it), the
 * summary (schemas, channels, statistics, chunk indexes, attachment indexes, metadata indexes, as mcap's C++ writer orders them), summary
 * offsets for the non-empty groups, the footer with the summary CRC, and the closing magic.
 */
export function writeFileTail(o: ByteWriter, base: number, content: SummaryContent): void {
  writeDataEnd(o, content.dataSectionCrc ?? 0);
  const summaryStart = o.length;
  const groups: Array<Omit<SummaryOffset, 'type'>> = [];
  const group = (opcode: number, write: () => void) => {
    const start = o.length;
    write();
    if (o.length > start)
      groups.push({ groupOpcode: opcode, groupStart: BigInt(base + start), groupLength: BigInt(o.length - start) });
  };
  group(Opcode.Schema, () => {
    for (const s of content.schemas) writeSchema(o, s);
  });
  group(Opcode.Channel, () => {
    for (const c of content.channels) writeChannel(o, c);
  });
  group(Opcode.Statistics, () => writeStatistics(o, content.statistics));
  group(Opcode.ChunkIndex, () => {
    for (const c of content.chunkIndexes) writeChunkIndex(o, c);
  });
  group(Opcode.AttachmentIndex, () => {
    for (const a of content.attachmentIndexes ?? []) writeAttachmentIndex(o, a);
  });
  group(Opcode.MetadataIndex, () => {
    for (const m of content.metadataIndexes) writeMetadataIndex(o, m);
  });
  const summaryOffsetStart = base + o.length;
  for (const g of groups) writeSummaryOffset(o, g);
  // The summary CRC covers the summary and the footer up to its own field, so the footer is written by hand.
  o.u8(Opcode.Footer);
  o.u64(20);
  o.u64(base + summaryStart);
  o.u64(summaryOffsetStart);
  o.u32(crc32(o.view8(summaryStart, o.length)));
  writeMagic(o);
}
