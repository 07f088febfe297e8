/** MCAP record opcodes (https://mcap.dev/spec). */
export const Opcode = {
  Header: 0x01,
  Footer: 0x02,
  Schema: 0x03,
  Channel: 0x04,
  Message: 0x05,
  Chunk: 0x06,
  MessageIndex: 0x07,
  ChunkIndex: 0x08,
  Attachment: 0x09,
  AttachmentIndex: 0x0a,
  Statistics: 0x0b,
  Metadata: 0x0c,
  MetadataIndex: 0x0d,
  SummaryOffset: 0x0e,
  DataEnd: 0x0f,
} as const;

/** `\x89MCAP0\r\n`, at both ends of every MCAP file. */
export const MAGIC = Uint8Array.of(0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a);

/** Opcode (1) + content length (8). */
export const RECORD_PREFIX = 9;
/** Message content before its payload: channel id (2), sequence (4), log time (8), publish time (8). */
export const MESSAGE_FIXED = 22;
/** A whole footer record: prefix + summary start (8) + summary offset start (8) + CRC (4). */
export const FOOTER_RECORD = RECORD_PREFIX + 20;
/** A whole DataEnd record: prefix + CRC (4). */
export const DATA_END_RECORD = RECORD_PREFIX + 4;
/** Chunk content before its records, without the compression string's bytes. */
export const CHUNK_FIXED = 8 + 8 + 8 + 4 + 4 + 8;

export const TWO_32 = 4294967296;
