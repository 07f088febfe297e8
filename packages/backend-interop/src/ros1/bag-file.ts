import { BagError } from '@vlink/bag-core';
import { DuplicateChunks, type Readable } from '@vlink/bag-mcap';
import { asCorrupt, corrupt, damaged } from '../common/errors.js';
import { startsWithHeader } from '../common/ros-header.js';
import { SkippedParts } from '../common/skipped-parts.js';
import { checkAgainstInfo } from './chunk-info-check.js';
import { ChunkMessages } from './chunk-messages.js';
import type { ChunkDecompress } from './codecs.js';
import { type Fields, MAGIC, Op, op, parseFields, text, time, u32, u64 } from './records.js';

export interface Ros1Connection {
  id: number;
  topic: string;
  type: string;
  md5sum: string;
  definition: string;
  callerid: string | undefined;
  latching: string | undefined;
  /** The type starts with a std_msgs/Header: its stamp and seq are read from every payload. */
  header: boolean;
}

export interface Ros1Chunk {
  /** Offset of the chunk record. */
  position: number;
  start: [number, number];
  end: [number, number];
  count: number;
  /** Messages per connection id in this chunk. */
  connections: Map<number, number>;
}

/** Records larger than this are refused rather than allocated (a damaged length field). */
const MAX_RECORD = 1 << 30;

/**
 * The index of a ROS 1 bag v2.0: bag header, then the connection and chunk-info records at `index_pos` (written when
 * the bag is closed). Chunks are read on demand.
 */
export class BagFile {
  readonly connections = new Map<number, Ros1Connection>();
  readonly chunks: Ros1Chunk[] = [];
  readonly indexPosition: number;

  /** What was found wrong and read around (an unindexed bag opened with `tryToFix`); empty for a sound bag. */
  readonly problems: string[] = [];

  /**
   * `codecs`: given when the bag is opened with `tryToFix`, so that a bag without an index (`rosbag record` stopped
   * before it closed the file) is read by scanning its chunks.
   */
  constructor(
    readonly path: string,
    private readonly readable: Readable,
    codecs?: Record<string, ChunkDecompress>,
  ) {
    const size = readable.size();
    const magic = new TextDecoder().decode(readable.read(0, Math.min(size, MAGIC.length)));
    if (magic !== MAGIC) {
      if (magic.startsWith('#ROSBAG V'))
        throw new BagError('UNSUPPORTED_FORMAT', `ROS bag ${magic.trim().slice(9)} (only 2.0 is read)`, { file: path });
      throw corrupt('not a ROS 1 bag (bad magic)', path, 0);
    }
    const header = this.readRecord(MAGIC.length, false);
    let connectionCount: number;
    let chunkCount: number;
    try {
      if (op(header.fields) !== Op.BagHeader) throw new RangeError('the first record is not the bag header');
      this.indexPosition = u64(header.fields, 'index_pos');
      connectionCount = u32(header.fields, 'conn_count');
      chunkCount = u32(header.fields, 'chunk_count');
    } catch (error) {
      throw asCorrupt(error, 'bad bag header', path, MAGIC.length);
    }
    // A closed bag without messages has an empty index right at the end of the file (index_pos = its size).
    const emptyIndex = this.indexPosition === size && connectionCount + chunkCount === 0;
    if (this.indexPosition === 0 || (this.indexPosition >= size && !emptyIndex)) {
      const what = 'the bag has no index (it was not closed; `rosbag reindex` rebuilds it)';
      if (!codecs) throw damaged(path, what, 'the messages of its whole chunks');
      this.problems.push(`${what}: its chunks were found by scanning the file`);
      this.scan(header.end, codecs);
    } else {
      let indexEnd: number;
      try {
        indexEnd = this.readIndex(connectionCount, chunkCount);
        if (codecs) this.leaveOutUnreadable(codecs);
      } catch (error) {
        // A bag cut off while rosbag wrote its index at close (or an index damaged since) still holds every chunk
        // before it: found by scanning as `rosbag reindex` does (found by hand: ROS 1 bags cut in their index
        // were refused even with tryToFix, all 91 messages in whole chunks before the cut).
        if (!BagError.isInstance(error) || error.code !== 'CORRUPT_FILE') throw error;
        const where = error.offset === undefined ? '' : `; offset ${error.offset}`;
        const what = `the bag's index is damaged (${error.detail}${where})`;
        if (!codecs) throw damaged(path, what, 'the messages of its whole chunks');
        this.connections.clear();
        this.chunks.length = 0;
        this.problems.push(`${what}: its chunks were found by scanning the file`);
        this.scan(header.end, codecs);
        indexEnd = size;
      }
      // The index is the last thing rosbag writes: bytes after it (another bag appended?) are read by no reader.
      if (connectionCount + chunkCount > 0 && indexEnd < size) {
        const what = `${size - indexEnd} bytes follow the bag's index, which rosbag does not read (another file appended to it?)`;
        if (!codecs) throw damaged(path, what, 'the bag before them');
        this.problems.push(what);
      }
    }
    // Log-time order of chunks (rosbag's own readers merge by time); ties keep file order.
    this.chunks.sort((a, b) => compareTime(a.start, b.start) || a.position - b.position);
  }

  /** The connection and chunk-info records at `index_pos`, checked against each other; returns where they end. */
  private readIndex(connectionCount: number, chunkCount: number): number {
    const { path } = this;
    let at = this.indexPosition;
    for (let i = 0; i < connectionCount + chunkCount; i++) {
      const record = this.readRecord(at, false);
      try {
        const kind = op(record.fields);
        if (kind === Op.Connection) this.addConnection(record.fields, record.data);
        else if (kind === Op.ChunkInfo) this.chunks.push(chunkInfo(record.fields, record.data));
        else throw new RangeError(`unexpected record op ${kind} in the index`);
      } catch (error) {
        throw asCorrupt(error, 'bad index record', path, at);
      }
      at = record.end;
    }
    const positions = new Set<number>();
    for (const chunk of this.chunks) {
      for (const id of chunk.connections.keys())
        if (!this.connections.has(id)) throw corrupt(`chunk info names unknown connection ${id}`, path, chunk.position);
      // Two chunk infos of one chunk (one copied over another's) would read that chunk twice and another never.
      if (positions.has(chunk.position))
        throw corrupt('two chunk infos describe the chunk at this offset', path, chunk.position);
      positions.add(chunk.position);
    }
    return at;
  }

  /**
   * With `tryToFix`, the chunks of an indexed bag are read once at open: one that does not decompress, or is not the
   * chunk its chunk info describes, is left out and named, where a read would stop at it (found by hand: one zeroed
   * chunk in the middle of a lz4 bag, and `clone --try-to-fix` copied nothing). Costs a read of the file at open.
   */
  private leaveOutUnreadable(codecs: Record<string, ChunkDecompress>): void {
    const unread = new SkippedParts('chunk(s) that do not read');
    let messages = 0;
    const readable = this.chunks.filter((chunk) => {
      try {
        const read = new ChunkMessages(this.readChunk(chunk, codecs), chunk.count, this.path, chunk.position);
        checkAgainstInfo(read, chunk, this.path);
        return true;
      } catch (error) {
        unread.add(error, chunk.position);
        messages += chunk.count;
        return false;
      }
    });
    const line = unread.line(`${messages} messages, as their chunk infos count them`);
    if (line === undefined) return;
    this.chunks.splice(0, this.chunks.length, ...readable);
    this.problems.push(line);
  }

  /**
   * Every chunk from `at` to the end of the file, with the connections and messages inside it, as `rosbag reindex`
   * finds them. A chunk that does not read is skipped; a record cut off by the end of the file (or whose framing is
   * damaged) stops the scan: what follows is told, not read.
   */
  private scan(at: number, codecs: Record<string, ChunkDecompress>): void {
    const size = this.readable.size();
    const repeats = { of: new DuplicateChunks(), chunks: 0, messages: 0 };
    // Chunks whose record is whole but whose content does not read: skipped, and the scan goes on after them (before,
    // one such chunk ended the scan, and every chunk after it was lost).
    const unread = new SkippedParts('chunk(s) that do not read');
    try {
      while (at < size) {
        const record = this.readRecord(at, false);
        if (op(record.fields) === Op.Chunk) {
          try {
            this.scanChunk(at, record.end, codecs, repeats);
          } catch (error) {
            unread.add(error, at);
          }
        }
        at = record.end;
      }
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      this.problems.push(`${why} at offset ${at}: the last ${size - at} bytes of the file are not read`);
    } finally {
      const skipped = unread.line();
      if (skipped !== undefined) this.problems.push(skipped);
      if (repeats.chunks > 0)
        this.problems.push(
          `${repeats.chunks} chunk(s) repeating an earlier one byte for byte skipped (${repeats.messages} messages)`,
        );
    }
  }

  private scanChunk(
    position: number,
    end: number,
    codecs: Record<string, ChunkDecompress>,
    repeats: { of: DuplicateChunks; chunks: number; messages: number },
  ): void {
    const chunk: Ros1Chunk = { position, start: [0, 0], end: [0, 0], count: 0, connections: new Map() };
    const bytes = this.readChunk(chunk, codecs);
    const messages = new ChunkMessages(bytes, 0, this.path, position);
    // rosbag never writes one chunk twice (times move on), but damage can copy a whole one over later bytes; the
    // index would not point at the copy, a scan finds it (found by hand: a chunk copied over the index of a lz4 bag
    // read 16 messages twice).
    const length = end - position;
    const stored = this.readable.read(position, length, new Uint8Array(length));
    if (repeats.of.copyOf(this.readable, { buf: stored, at: 0, length, offset: position }) !== undefined) {
      repeats.chunks++;
      repeats.messages += messages.count;
      return;
    }
    for (const record of records(bytes))
      if (op(record.fields) === Op.Connection) this.addConnection(record.fields, record.data);
    for (let i = 0; i < messages.count; i++) {
      const t: [number, number] = [messages.sec[i]!, messages.nsec[i]!];
      if (chunk.count === 0 || compareTime(t, chunk.start) < 0) chunk.start = t;
      if (chunk.count === 0 || compareTime(t, chunk.end) > 0) chunk.end = t;
      const id = messages.conn[i]!;
      chunk.connections.set(id, (chunk.connections.get(id) ?? 0) + 1);
      chunk.count++;
    }
    if (chunk.count > 0) this.chunks.push(chunk);
  }

  /** The records of a chunk, decompressed. */
  readChunk(chunk: Ros1Chunk, codecs: Record<string, ChunkDecompress>): Uint8Array {
    const record = this.readRecord(chunk.position, true);
    let compression: string;
    let size: number;
    try {
      if (op(record.fields) !== Op.Chunk) throw new RangeError('chunk info does not point at a chunk');
      compression = text(record.fields, 'compression') ?? '';
      size = u32(record.fields, 'size');
      // The size is allocated before decompressing: a damaged field must not ask for gigabytes.
      if (size > MAX_RECORD) throw new RangeError(`uncompressed size ${size} is beyond ${MAX_RECORD} bytes`);
    } catch (error) {
      throw asCorrupt(error, 'bad chunk record', this.path, chunk.position);
    }
    const decompress = codecs[compression];
    if (!decompress)
      throw new BagError('UNSUPPORTED_FORMAT', `chunk compression "${compression}" is not supported`, {
        file: this.path,
        offset: chunk.position,
      });
    let out: Uint8Array;
    try {
      out = decompress(record.data, size);
    } catch (error) {
      throw asCorrupt(error, `${compression} chunk does not decompress`, this.path, chunk.position);
    }
    if (out.length !== size)
      throw corrupt(`chunk decompressed to ${out.length} bytes, not ${size}`, this.path, chunk.position);
    return out;
  }

  /** The compression of the first chunk (bags use one for all), `none` for a bag without chunks. */
  compression(): string {
    const first = this.chunks[0];
    if (!first) return 'none';
    try {
      return text(this.readRecord(first.position, false).fields, 'compression') || 'none';
    } catch {
      return 'unknown';
    }
  }

  /** One record at `at`: its header fields and (when `withData` or small) its data. */
  private readRecord(at: number, withData: boolean): { fields: Fields; data: Uint8Array; end: number } {
    const size = this.readable.size();
    try {
      if (at + 4 > size) throw new RangeError('record starts past the end of the file');
      const headerLength = this.u32At(at);
      if (headerLength > MAX_RECORD || at + 8 + headerLength > size)
        throw new RangeError('record header runs past the end');
      const header = this.readable.read(at + 4, headerLength).slice();
      const fields = parseFields(header, 0, header.length);
      const dataAt = at + 4 + headerLength;
      const dataLength = this.u32At(dataAt);
      if (dataLength > MAX_RECORD || dataAt + 4 + dataLength > size)
        throw new RangeError('record data runs past the end');
      const kind = fields.get('op')?.[0];
      const read = withData || kind === Op.Connection || kind === Op.ChunkInfo || kind === Op.BagHeader;
      const data = read ? this.readable.read(dataAt + 4, dataLength).slice() : new Uint8Array(0);
      return { fields, data, end: dataAt + 4 + dataLength };
    } catch (error) {
      throw asCorrupt(error, 'bad record', this.path, at);
    }
  }

  private u32At(at: number): number {
    const b = this.readable.read(at, 4);
    return new DataView(b.buffer, b.byteOffset, 4).getUint32(0, true);
  }

  private addConnection(fields: Fields, data: Uint8Array): void {
    const id = u32(fields, 'conn');
    const header = parseFields(data, 0, data.length);
    const definition = text(header, 'message_definition') ?? '';
    this.connections.set(id, {
      id,
      topic: text(header, 'topic') ?? text(fields, 'topic') ?? '',
      type: text(header, 'type') ?? '',
      md5sum: text(header, 'md5sum') ?? '',
      definition,
      callerid: text(header, 'callerid'),
      latching: text(header, 'latching'),
      header: startsWithHeader(definition, false),
    });
  }
}

/** The records inside a decompressed chunk (header fields and data), in order. */
function* records(bytes: Uint8Array): IterableIterator<{ fields: Fields; data: Uint8Array }> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let p = 0; p + 8 <= bytes.length; ) {
    const headerEnd = p + 4 + view.getUint32(p, true);
    if (headerEnd + 4 > bytes.length) return; // ChunkMessages tells what is wrong with the chunk
    const dataEnd = headerEnd + 4 + view.getUint32(headerEnd, true);
    if (dataEnd > bytes.length) return;
    yield { fields: parseFields(bytes, p + 4, headerEnd), data: bytes.subarray(headerEnd + 4, dataEnd) };
    p = dataEnd;
  }
}

function chunkInfo(fields: Fields, data: Uint8Array): Ros1Chunk {
  const count = u32(fields, 'count');
  if (data.length < count * 8) throw new RangeError('chunk info data is shorter than its count');
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const connections = new Map<number, number>();
  let total = 0;
  for (let i = 0; i < count; i++) {
    const n = view.getUint32(i * 8 + 4, true);
    connections.set(view.getUint32(i * 8, true), n);
    total += n;
  }
  return {
    position: u64(fields, 'chunk_pos'),
    start: time(fields, 'start_time'),
    end: time(fields, 'end_time'),
    count: total,
    connections,
  };
}

export function compareTime(a: readonly [number, number], b: readonly [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}
