import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

/**
 * The protobuf messages of Apollo Cyber RT's record format (`cyber/proto/record.proto`, `proto_desc.proto`), decoded
 * with `@bufbuild/protobuf`'s wire reader: each section of a `.record` is one of these messages. Unknown fields are
 * skipped, as protobuf requires; a field with the wrong wire type is skipped too rather than misread.
 */

export enum SectionType {
  Header = 0,
  ChunkHeader = 1,
  ChunkBody = 2,
  Index = 3,
  Channel = 4,
}

export interface RecordHeader {
  majorVersion: number;
  minorVersion: number;
  /** 0 none, 1 bz2, 2 lz4. */
  compress: number;
  chunkInterval: bigint;
  segmentInterval: bigint;
  indexPosition: bigint;
  chunkNumber: bigint;
  channelNumber: bigint;
  beginTime: bigint;
  endTime: bigint;
  messageNumber: bigint;
  size: bigint;
  isComplete: boolean;
  chunkRawSize: bigint;
  segmentRawSize: bigint;
}

export interface ChannelCache {
  name: string;
  messageType: string;
  protoDesc: Uint8Array;
  messageNumber: number;
}

export interface ChunkHeaderCache {
  position: number;
  messageNumber: number;
  beginTime: bigint;
  endTime: bigint;
  rawSize: bigint;
}

export interface RecordIndex {
  channels: ChannelCache[];
  chunkHeaders: ChunkHeaderCache[];
  /** Positions of the chunk bodies, in index order (the n-th body belongs to the n-th header). */
  chunkBodies: number[];
}

/** Calls `field(number, wireType, reader)` for each field; the callback reads the value or returns false to skip it. */
function eachField(bytes: Uint8Array, field: (no: number, wt: WireType, r: BinaryReader) => boolean): void {
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    if (!field(no, wt, r)) r.skip(wt, no);
  }
}

const V = WireType.Varint;
const L = WireType.LengthDelimited;
const u64 = (r: BinaryReader) => BigInt(r.uint64());

export function decodeHeader(bytes: Uint8Array): RecordHeader {
  const h: RecordHeader = {
    majorVersion: 0,
    minorVersion: 0,
    compress: 0,
    chunkInterval: 0n,
    segmentInterval: 0n,
    indexPosition: 0n,
    chunkNumber: 0n,
    channelNumber: 0n,
    beginTime: 0n,
    endTime: 0n,
    messageNumber: 0n,
    size: 0n,
    isComplete: false,
    chunkRawSize: 0n,
    segmentRawSize: 0n,
  };
  const u64Fields: Record<number, keyof RecordHeader> = {
    4: 'chunkInterval',
    5: 'segmentInterval',
    6: 'indexPosition',
    7: 'chunkNumber',
    8: 'channelNumber',
    9: 'beginTime',
    10: 'endTime',
    11: 'messageNumber',
    12: 'size',
    14: 'chunkRawSize',
    15: 'segmentRawSize',
  };
  eachField(bytes, (no, wt, r) => {
    if (wt !== V) return false;
    if (no === 1) h.majorVersion = r.uint32();
    else if (no === 2) h.minorVersion = r.uint32();
    else if (no === 3) h.compress = r.int32();
    else if (no === 13) h.isComplete = r.bool();
    else if (u64Fields[no]) (h as unknown as Record<string, bigint>)[u64Fields[no]] = u64(r);
    else return false;
    return true;
  });
  return h;
}

/** A Channel section, or (`cache`) an index's ChannelCache, which puts `message_number` first. */
export function decodeChannel(bytes: Uint8Array, cache: boolean): ChannelCache {
  // Channel: 1 name, 2 message_type, 3 proto_desc. ChannelCache: 1 message_number, 2 name, 3 message_type, 4 proto_desc.
  const c: ChannelCache = { name: '', messageType: '', protoDesc: new Uint8Array(0), messageNumber: 0 };
  const shift = cache ? 1 : 0;
  eachField(bytes, (no, wt, r) => {
    if (shift && no === 1 && wt === V) c.messageNumber = Number(u64(r));
    else if (no === 1 + shift && wt === L) c.name = r.string();
    else if (no === 2 + shift && wt === L) c.messageType = r.string();
    else if (no === 3 + shift && wt === L) c.protoDesc = r.bytes();
    else return false;
    return true;
  });
  return c;
}

export function decodeChunkHeader(bytes: Uint8Array, position: number, cache: boolean): ChunkHeaderCache {
  // ChunkHeader: 1 begin_time, 2 end_time, 3 message_number, 4 raw_size.
  // ChunkHeaderCache: 1 message_number, 2 begin_time, 3 end_time, 4 raw_size.
  const h: ChunkHeaderCache = { position, messageNumber: 0, beginTime: 0n, endTime: 0n, rawSize: 0n };
  eachField(bytes, (no, wt, r) => {
    if (wt !== V) return false;
    const value = u64(r);
    const field = cache
      ? ['', 'messageNumber', 'beginTime', 'endTime', 'rawSize'][no]
      : ['', 'beginTime', 'endTime', 'messageNumber', 'rawSize'][no];
    if (field === 'messageNumber') h.messageNumber = Number(value);
    else if (field === 'beginTime') h.beginTime = value;
    else if (field === 'endTime') h.endTime = value;
    else if (field === 'rawSize') h.rawSize = value;
    return true;
  });
  return h;
}

export function decodeIndex(bytes: Uint8Array): RecordIndex {
  const index: RecordIndex = { channels: [], chunkHeaders: [], chunkBodies: [] };
  eachField(bytes, (no, wt, r) => {
    if (no !== 1 || wt !== L) return false;
    // SingleIndex: 1 type, 2 position, 101 channel_cache, 102 chunk_header_cache, 103 chunk_body_cache.
    let type = -1;
    let position = 0;
    let payload: Uint8Array | undefined;
    eachField(r.bytes(), (n, w, s) => {
      if (n === 1 && w === V) type = s.int32();
      else if (n === 2 && w === V) position = Number(u64(s));
      else if (n >= 101 && n <= 103 && w === L) payload = s.bytes();
      else return false;
      return true;
    });
    if (type === SectionType.Channel && payload) index.channels.push(decodeChannel(payload, true));
    else if (type === SectionType.ChunkHeader && payload)
      index.chunkHeaders.push(decodeChunkHeader(payload, position, true));
    else if (type === SectionType.ChunkBody) index.chunkBodies.push(position);
    return true;
  });
  return index;
}

/** The messages of a ChunkBody: `visit(channelName, time, content)` for each SingleMessage (views into `bytes`). */
export function eachSingleMessage(
  bytes: Uint8Array,
  visit: (channel: string, time: bigint, content: Uint8Array) => void,
): void {
  eachField(bytes, (no, wt, r) => {
    if (no !== 1 || wt !== L) return false;
    let channel = '';
    let time = 0n;
    let content: Uint8Array = EMPTY;
    eachField(r.bytes(), (n, w, s) => {
      if (n === 1 && w === L) channel = s.string();
      else if (n === 2 && w === V) time = u64(s);
      else if (n === 3 && w === L) content = s.bytes();
      else return false;
      return true;
    });
    visit(channel, time, content);
    return true;
  });
}

const EMPTY = new Uint8Array(0);

/**
 * A channel's `ProtoDesc` tree (`desc`: a serialized FileDescriptorProto, `dependencies`: ProtoDescs) as a
 * `google.protobuf.FileDescriptorSet` — the schema form MCAP and the rest of vlink-bag use for protobuf — with every
 * file once, dependencies before the files that import them.
 */
export function protoDescToFileDescriptorSet(protoDesc: Uint8Array): Uint8Array {
  const files = new Map<string, Uint8Array>();
  const visit = (node: Uint8Array, depth: number) => {
    if (depth > 64) throw new RangeError('ProtoDesc dependencies nest too deep');
    let desc: Uint8Array | undefined;
    const dependencies: Uint8Array[] = [];
    eachField(node, (no, wt, r) => {
      if (no === 1 && wt === L) desc = r.bytes();
      else if (no === 2 && wt === L) dependencies.push(r.bytes());
      else return false;
      return true;
    });
    for (const dependency of dependencies) visit(dependency, depth + 1);
    if (desc && desc.length > 0) {
      const name = fileName(desc);
      if (!files.has(name)) files.set(name, desc);
    }
  };
  visit(protoDesc, 0);
  const w = new BinaryWriter();
  for (const desc of files.values()) w.tag(1, L).bytes(desc);
  return w.finish();
}

/** FileDescriptorProto field 1: the file's name. */
function fileName(desc: Uint8Array): string {
  let name = '';
  eachField(desc, (no, wt, r) => {
    if (no !== 1 || wt !== L) return false;
    name = r.string();
    return true;
  });
  return name;
}
