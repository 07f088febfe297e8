import { MESSAGE_FIXED, Opcode, RECORD_PREFIX, TWO_32 } from './constants.js';
import type { Chunk, McapRecord } from './records.js';

/**
 * A record that does not parse. `at` is the byte offset inside the parsed buffer; callers add the buffer's file
 * offset and turn it into a `BagError('CORRUPT_FILE')`.
 */
export class RecordCorruption extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
    this.name = 'RecordCorruption';
  }
}

const decoder = new TextDecoder();

/** Bounds-checked little-endian field reads inside one record: nothing is read past `end`. */
export class FieldReader {
  pos: number;
  constructor(
    readonly bytes: Uint8Array,
    readonly view: DataView,
    start: number,
    readonly end: number,
  ) {
    this.pos = start;
  }

  private need(n: number, what: string): void {
    if (n < 0 || this.pos + n > this.end) {
      throw new RecordCorruption(`${what} (${n} bytes) runs past the end of its record`, this.pos);
    }
  }
  u8(): number {
    this.need(1, 'u8');
    return this.bytes[this.pos++]!;
  }
  u16(): number {
    this.need(2, 'u16');
    const v = this.view.getUint16(this.pos, true);
    this.pos += 2;
    return v;
  }
  u32(): number {
    this.need(4, 'u32');
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.need(8, 'u64');
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  /** A u64 length or offset as a number; anything above 2^53 cannot be a real size and is corruption. */
  u64n(what: string): number {
    this.need(8, what);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getUint32(this.pos + 4, true);
    if (hi > 0x1fffff) throw new RecordCorruption(`${what} is implausibly large`, this.pos);
    this.pos += 8;
    return hi * TWO_32 + lo;
  }
  bytesView(n: number, what: string): Uint8Array {
    this.need(n, what);
    const v = this.bytes.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  string(what = 'string'): string {
    const n = this.u32();
    if (n === 0) return '';
    return decoder.decode(this.bytesView(n, what));
  }
  stringMap(what: string): Map<string, string> {
    const n = this.u32();
    this.need(n, what);
    const stop = this.pos + n;
    const out = new Map<string, string>();
    const inner = new FieldReader(this.bytes, this.view, this.pos, stop);
    while (inner.pos < stop) {
      const key = inner.string(`${what} key`);
      const value = inner.string(`${what} value`);
      if (out.has(key)) throw new RecordCorruption(`${what}: duplicate key "${key}"`, inner.pos);
      out.set(key, value);
    }
    this.pos = stop;
    return out;
  }
  /** A map of u16 → u64 (channel counts, message index offsets). */
  idMap(what: string): Map<number, bigint> {
    const n = this.u32();
    this.need(n, what);
    if (n % 10 !== 0) throw new RecordCorruption(`${what}: length ${n} is not a multiple of 10`, this.pos);
    const out = new Map<number, bigint>();
    for (const stop = this.pos + n; this.pos < stop; ) {
      const id = this.view.getUint16(this.pos, true);
      const value = this.view.getBigUint64(this.pos + 2, true);
      this.pos += 10;
      if (out.has(id)) throw new RecordCorruption(`${what}: duplicate id ${id}`, this.pos);
      out.set(id, value);
    }
    return out;
  }
}

/**
 * Total length (prefix included) of the record at `offset`, or -1 when fewer than its bytes are in [offset, end)
 * (a truncated file, or a read window that ends mid-record). Throws when the length cannot be real.
 */
export function recordLengthAt(view: DataView, offset: number, end: number): number {
  if (end - offset < RECORD_PREFIX) return -1;
  const lo = view.getUint32(offset + 1, true);
  const hi = view.getUint32(offset + 5, true);
  if (hi > 0x1fffff) throw new RecordCorruption(`record length is implausibly large`, offset);
  const total = RECORD_PREFIX + hi * TWO_32 + lo;
  return total <= end - offset ? total : -1;
}

/**
 * Parses the complete record at `offset` (its bytes must lie in [offset, end)): the record and its total length.
 * Unknown opcodes come back as `Unknown` records; trailing bytes inside a record are skipped (MCAP allows padding).
 */
export function parseRecord(
  bytes: Uint8Array,
  view: DataView,
  offset: number,
  end: number,
): { record: McapRecord; length: number } {
  const length = recordLengthAt(view, offset, end);
  if (length < 0) throw new RecordCorruption('record is truncated', offset);
  const opcode = bytes[offset]!;
  const r = new FieldReader(bytes, view, offset + RECORD_PREFIX, offset + length);
  return { record: parseBody(opcode, r), length };
}

function parseBody(opcode: number, r: FieldReader): McapRecord {
  switch (opcode) {
    case Opcode.Header:
      return { type: 'Header', profile: r.string('profile'), library: r.string('library') };
    case Opcode.Footer:
      return { type: 'Footer', summaryStart: r.u64(), summaryOffsetStart: r.u64(), summaryCrc: r.u32() };
    case Opcode.Schema: {
      const id = r.u16();
      const name = r.string('schema name');
      const encoding = r.string('schema encoding');
      const n = r.u32();
      return { type: 'Schema', id, name, encoding, data: r.bytesView(n, 'schema data') };
    }
    case Opcode.Channel: {
      const id = r.u16();
      const schemaId = r.u16();
      const topic = r.string('topic');
      const messageEncoding = r.string('message encoding');
      const metadata = r.stringMap('channel metadata');
      return { type: 'Channel', id, schemaId, topic, messageEncoding, metadata };
    }
    case Opcode.Message: {
      if (r.end - r.pos < MESSAGE_FIXED) throw new RecordCorruption('message record is too short', r.pos);
      const channelId = r.u16();
      const sequence = r.u32();
      const logTime = r.u64();
      const publishTime = r.u64();
      return {
        type: 'Message',
        channelId,
        sequence,
        logTime,
        publishTime,
        data: r.bytesView(r.end - r.pos, 'message data'),
      };
    }
    case Opcode.Chunk: {
      const chunk = readChunkHeader(r);
      r.bytesView(chunk.recordsLength, 'chunk records');
      return chunk;
    }
    case Opcode.MessageIndex: {
      const channelId = r.u16();
      const n = r.u32();
      if (n % 16 !== 0) throw new RecordCorruption(`message index length ${n} is not a multiple of 16`, r.pos);
      const stop = r.pos + n;
      if (stop > r.end) throw new RecordCorruption('message index runs past its record', r.pos);
      const records: Array<[bigint, bigint]> = [];
      while (r.pos < stop) records.push([r.u64(), r.u64()]);
      return { type: 'MessageIndex', channelId, records };
    }
    case Opcode.ChunkIndex:
      return {
        type: 'ChunkIndex',
        messageStartTime: r.u64(),
        messageEndTime: r.u64(),
        chunkStartOffset: r.u64(),
        chunkLength: r.u64(),
        messageIndexOffsets: r.idMap('message index offsets'),
        messageIndexLength: r.u64(),
        compression: r.string('compression'),
        compressedSize: r.u64(),
        uncompressedSize: r.u64(),
      };
    case Opcode.Attachment: {
      const logTime = r.u64();
      const createTime = r.u64();
      const name = r.string('attachment name');
      const mediaType = r.string('media type');
      const n = r.u64n('attachment size');
      const data = r.bytesView(n, 'attachment data');
      return { type: 'Attachment', logTime, createTime, name, mediaType, data, crc: r.u32() };
    }
    case Opcode.AttachmentIndex:
      return {
        type: 'AttachmentIndex',
        offset: r.u64(),
        length: r.u64(),
        logTime: r.u64(),
        createTime: r.u64(),
        dataSize: r.u64(),
        name: r.string('attachment name'),
        mediaType: r.string('media type'),
      };
    case Opcode.Statistics:
      return {
        type: 'Statistics',
        messageCount: r.u64(),
        schemaCount: r.u16(),
        channelCount: r.u32(),
        attachmentCount: r.u32(),
        metadataCount: r.u32(),
        chunkCount: r.u32(),
        messageStartTime: r.u64(),
        messageEndTime: r.u64(),
        channelMessageCounts: r.idMap('channel message counts'),
      };
    case Opcode.Metadata:
      return { type: 'Metadata', name: r.string('metadata name'), metadata: r.stringMap('metadata') };
    case Opcode.MetadataIndex:
      return { type: 'MetadataIndex', offset: r.u64(), length: r.u64(), name: r.string('metadata name') };
    case Opcode.SummaryOffset:
      return { type: 'SummaryOffset', groupOpcode: r.u8(), groupStart: r.u64(), groupLength: r.u64() };
    case Opcode.DataEnd:
      return { type: 'DataEnd', dataSectionCrc: r.u32() };
    default:
      return { type: 'Unknown', opcode, data: r.bytesView(r.end - r.pos, 'record') };
  }
}

export function hasMagic(bytes: Uint8Array, offset: number, magic: Uint8Array): boolean {
  if (offset < 0 || offset + magic.length > bytes.length) return false;
  for (let i = 0; i < magic.length; i++) if (bytes[offset + i] !== magic[i]) return false;
  return true;
}

/**
 * A chunk record's fields from `r` (at its content, after the record prefix) up to its records, which are not read:
 * `recordsOffset` is where they start. Shared by `parseRecord` and the salvage of a chunk cut short, whose records
 * may not all be there.
 */
export function readChunkHeader(r: FieldReader): Chunk {
  const messageStartTime = r.u64();
  const messageEndTime = r.u64();
  const uncompressedSize = r.u64();
  const uncompressedCrc = r.u32();
  const compression = r.string('compression');
  const recordsLength = r.u64n('chunk records length');
  return {
    type: 'Chunk',
    messageStartTime,
    messageEndTime,
    uncompressedSize,
    uncompressedCrc,
    compression,
    recordsOffset: r.pos,
    recordsLength,
  };
}
