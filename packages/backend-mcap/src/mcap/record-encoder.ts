import type { ByteWriter } from './byte-writer.js';
import { MAGIC, Opcode } from './constants.js';
import { crc32 } from './crc32.js';
import type {
  Attachment,
  AttachmentIndex,
  ChunkIndex,
  Header,
  Metadata,
  MetadataIndex,
  Schema,
  Statistics,
  SummaryOffset,
} from './records.js';

/** Encoders for the records that are not on the per-message path. Each returns the record's total size. */

export function writeMagic(w: ByteWriter): void {
  w.raw(MAGIC);
}

export function writeHeader(w: ByteWriter, h: Omit<Header, 'type'>): number {
  const at = w.beginRecord(Opcode.Header);
  w.string(h.profile);
  w.string(h.library);
  return w.endRecord(at);
}

export function writeSchema(w: ByteWriter, s: Omit<Schema, 'type'>): number {
  const at = w.beginRecord(Opcode.Schema);
  w.u16(s.id);
  w.string(s.name);
  w.string(s.encoding);
  w.u32(s.data.length);
  w.raw(s.data);
  return w.endRecord(at);
}

export interface ChannelFields {
  id: number;
  schemaId: number;
  topic: string;
  messageEncoding: string;
  metadata: ReadonlyMap<string, string>;
}

export function writeChannel(w: ByteWriter, c: ChannelFields): number {
  const at = w.beginRecord(Opcode.Channel);
  w.u16(c.id);
  w.u16(c.schemaId);
  w.string(c.topic);
  w.string(c.messageEncoding);
  w.stringMap(c.metadata);
  return w.endRecord(at);
}

export function writeMetadata(w: ByteWriter, m: Omit<Metadata, 'type'>): number {
  const at = w.beginRecord(Opcode.Metadata);
  w.string(m.name);
  w.stringMap(m.metadata);
  return w.endRecord(at);
}

export function writeMetadataIndex(w: ByteWriter, m: Omit<MetadataIndex, 'type'>): number {
  const at = w.beginRecord(Opcode.MetadataIndex);
  w.u64big(m.offset);
  w.u64big(m.length);
  w.string(m.name);
  return w.endRecord(at);
}

export function writeChunkIndex(w: ByteWriter, c: Omit<ChunkIndex, 'type'>): number {
  const at = w.beginRecord(Opcode.ChunkIndex);
  w.u64big(c.messageStartTime);
  w.u64big(c.messageEndTime);
  w.u64big(c.chunkStartOffset);
  w.u64big(c.chunkLength);
  w.u32(c.messageIndexOffsets.size * 10);
  for (const [id, offset] of c.messageIndexOffsets) {
    w.u16(id);
    w.u64big(offset);
  }
  w.u64big(c.messageIndexLength);
  w.string(c.compression);
  w.u64big(c.compressedSize);
  w.u64big(c.uncompressedSize);
  return w.endRecord(at);
}

export function writeStatistics(w: ByteWriter, s: Omit<Statistics, 'type'>): number {
  const at = w.beginRecord(Opcode.Statistics);
  w.u64big(s.messageCount);
  w.u16(s.schemaCount);
  w.u32(s.channelCount);
  w.u32(s.attachmentCount);
  w.u32(s.metadataCount);
  w.u32(s.chunkCount);
  w.u64big(s.messageStartTime);
  w.u64big(s.messageEndTime);
  w.u32(s.channelMessageCounts.size * 10);
  for (const [id, count] of s.channelMessageCounts) {
    w.u16(id);
    w.u64big(count);
  }
  return w.endRecord(at);
}

export function writeSummaryOffset(w: ByteWriter, s: Omit<SummaryOffset, 'type'>): number {
  const at = w.beginRecord(Opcode.SummaryOffset);
  w.u8(s.groupOpcode);
  w.u64big(s.groupStart);
  w.u64big(s.groupLength);
  return w.endRecord(at);
}

export function writeDataEnd(w: ByteWriter, dataSectionCrc: number): number {
  const at = w.beginRecord(Opcode.DataEnd);
  w.u32(dataSectionCrc);
  return w.endRecord(at);
}

/** An Attachment record; its CRC covers every field before it (MCAP spec). */
export function writeAttachment(w: ByteWriter, a: Omit<Attachment, 'type' | 'crc'>): number {
  const at = w.beginRecord(Opcode.Attachment);
  w.u64big(a.logTime);
  w.u64big(a.createTime);
  w.string(a.name);
  w.string(a.mediaType);
  w.u64(a.data.length);
  w.raw(a.data);
  w.u32(crc32(w.view8(at + 9, w.length)));
  return w.endRecord(at);
}

export function writeAttachmentIndex(w: ByteWriter, a: Omit<AttachmentIndex, 'type'>): number {
  const at = w.beginRecord(Opcode.AttachmentIndex);
  w.u64big(a.offset);
  w.u64big(a.length);
  w.u64big(a.logTime);
  w.u64big(a.createTime);
  w.u64big(a.dataSize);
  w.string(a.name);
  w.string(a.mediaType);
  return w.endRecord(at);
}
