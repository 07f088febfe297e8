/**
 * MCAP records as a tagged union (the shape `@mcap/core` uses). 64-bit times and offsets are `bigint` at this level;
 * the hot read path (`MessageView`) keeps them as two 32-bit halves instead.
 */
export interface Header {
  type: 'Header';
  profile: string;
  library: string;
}
export interface Footer {
  type: 'Footer';
  summaryStart: bigint;
  summaryOffsetStart: bigint;
  summaryCrc: number;
}
export interface Schema {
  type: 'Schema';
  id: number;
  name: string;
  encoding: string;
  data: Uint8Array;
}
export interface Channel {
  type: 'Channel';
  id: number;
  schemaId: number;
  topic: string;
  messageEncoding: string;
  metadata: Map<string, string>;
}
export interface Message {
  type: 'Message';
  channelId: number;
  sequence: number;
  logTime: bigint;
  publishTime: bigint;
  /** A view into the chunk or read buffer: valid until the next read. */
  data: Uint8Array;
}
export interface Chunk {
  type: 'Chunk';
  messageStartTime: bigint;
  messageEndTime: bigint;
  uncompressedSize: bigint;
  uncompressedCrc: number;
  compression: string;
  /** Offset of the (possibly compressed) records inside the buffer the chunk was parsed from. */
  recordsOffset: number;
  recordsLength: number;
}
export interface MessageIndex {
  type: 'MessageIndex';
  channelId: number;
  records: Array<[logTime: bigint, offset: bigint]>;
}
export interface ChunkIndex {
  type: 'ChunkIndex';
  messageStartTime: bigint;
  messageEndTime: bigint;
  chunkStartOffset: bigint;
  chunkLength: bigint;
  messageIndexOffsets: Map<number, bigint>;
  messageIndexLength: bigint;
  compression: string;
  compressedSize: bigint;
  uncompressedSize: bigint;
}
export interface Attachment {
  type: 'Attachment';
  logTime: bigint;
  createTime: bigint;
  name: string;
  mediaType: string;
  data: Uint8Array;
  crc: number;
}
export interface AttachmentIndex {
  type: 'AttachmentIndex';
  offset: bigint;
  length: bigint;
  logTime: bigint;
  createTime: bigint;
  dataSize: bigint;
  name: string;
  mediaType: string;
}
export interface Statistics {
  type: 'Statistics';
  messageCount: bigint;
  schemaCount: number;
  channelCount: number;
  attachmentCount: number;
  metadataCount: number;
  chunkCount: number;
  messageStartTime: bigint;
  messageEndTime: bigint;
  channelMessageCounts: Map<number, bigint>;
}
export interface Metadata {
  type: 'Metadata';
  name: string;
  metadata: Map<string, string>;
}
export interface MetadataIndex {
  type: 'MetadataIndex';
  offset: bigint;
  length: bigint;
  name: string;
}
export interface SummaryOffset {
  type: 'SummaryOffset';
  groupOpcode: number;
  groupStart: bigint;
  groupLength: bigint;
}
export interface DataEnd {
  type: 'DataEnd';
  dataSectionCrc: number;
}
export interface UnknownRecord {
  type: 'Unknown';
  opcode: number;
  data: Uint8Array;
}

export type McapRecord =
  | Header
  | Footer
  | Schema
  | Channel
  | Message
  | Chunk
  | MessageIndex
  | ChunkIndex
  | Attachment
  | AttachmentIndex
  | Statistics
  | Metadata
  | MetadataIndex
  | SummaryOffset
  | DataEnd
  | UnknownRecord;

export type McapRecordType = McapRecord['type'];
