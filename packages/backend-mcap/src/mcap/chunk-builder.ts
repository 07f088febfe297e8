import { ByteWriter, setTime } from './byte-writer.js';
import { Opcode, TWO_32 } from './constants.js';
import { crc32Append } from './crc32.js';
import { writeMessageIndex } from './chunk-encoders.js';

/** Bytes of a Message record before its payload: opcode, length, channel, sequence, log and publish time. */
export const MESSAGE_HEADER = 31;

/** A chunk whose records are complete, before compression. */
export interface SealedChunk {
  startRel: number;
  endRel: number;
  uncompressedSize: number;
  crc: number;
  /** Its message index records (written right after it), with each channel's offset into them. */
  index: Uint8Array;
  indexIds: number[];
  indexOffsets: number[];
  /** When it started collecting (for `pendingAgeMs`). */
  openedAt: number;
  /** Bytes of the data section that go right before it (pending outside chunks when it was handed over). */
  before?: Uint8Array;
}

/**
 * One channel's message index in the open chunk: log time offsets and record offsets, interleaved, `length` numbers
 * of `entries` used; kept (and grown) from chunk to chunk. One object per channel, not two arrays by channel id (the
 * entries and their lengths): one lookup a message instead of two.
 */
class ChannelIndex {
  entries = new Float64Array(64);
  length = 0;
}

/**
 * The open chunk of an MCAP writer, as `@mcap/core` keeps its `ChunkBuilder` apart from the writer: the records
 * collected so far (encoded straight into one reusable buffer), the time range, the CRC of records already sent to
 * disk, and each channel's message index. What becomes of a sealed chunk (compressed, written whole, or finished
 * after a spill) is the data section's business (`DataSection`).
 *
 * Times are ns offsets from the writer's time base (numbers), split into the base's high and low words once.
 */
export class ChunkBuilder {
  /** Pending records of the open chunk (those not spilled to disk yet). */
  readonly records: ByteWriter;
  private readonly indexBuffer = new ByteWriter(4096);
  isOpen = false;
  openedAt = 0;
  /** Uncompressed bytes of the chunk's records, spilled ones included. */
  size = 0;
  messages = 0;
  startRel = 0;
  endRel = 0;
  /** CRC of the records already spilled to disk (0 when CRCs are off). */
  private crc = 0;
  /** Channels with messages in the open chunk, in first-message order. */
  private channelIds: number[] = [];
  /** Per channel id, its message index (one lookup a message; see `ChannelIndex`). */
  private readonly indexes: (ChannelIndex | undefined)[] = [];

  constructor(
    capacity: number,
    private readonly baseHi: number,
    private readonly baseLo: number,
    private readonly withCrc: boolean,
  ) {
    this.records = new ByteWriter(capacity);
  }

  open(now = Date.now()): void {
    this.isOpen = true;
    this.openedAt = now;
    this.size = 0;
    this.messages = 0;
    this.crc = 0;
    this.records.reset();
  }

  /** Counts a record the caller encoded into `records` (a schema or channel). */
  added(length: number): void {
    this.size += length;
  }

  /**
   * Indexes a message and encodes its header into `records`; the caller appends the payload (`records.raw`) or
   * spills it. Returns true once the chunk holds at least `limit` bytes.
   */
  addMessage(
    channelId: number,
    sequence: number,
    timeNs: number,
    size: number,
    publishNs: number | bigint,
    limit: number,
  ): boolean {
    if (this.messages === 0) this.startRel = this.endRel = timeNs;
    else if (timeNs < this.startRel) this.startRel = timeNs;
    else if (timeNs > this.endRel) this.endRel = timeNs;
    this.messages++;
    let index = this.indexes[channelId];
    if (index === undefined) index = this.indexes[channelId] = new ChannelIndex();
    let n = index.length;
    let entries = index.entries;
    if (n === 0) this.channelIds.push(channelId);
    else if (n === entries.length) {
      const grown = new Float64Array(n * 2);
      grown.set(entries);
      entries = index.entries = grown;
    }
    entries[n++] = timeNs;
    entries[n++] = this.size;
    index.length = n;
    encodeMessageHeader(this.records, this.baseHi, this.baseLo, channelId, sequence, timeNs, size, publishNs);
    this.size += MESSAGE_HEADER + size;
    return this.size >= limit;
  }

  /**
   * The pending records, for a caller about to write them and `payload` to disk now (a spill): both are added to
   * the chunk's CRC. Call `records.reset()` once they are written.
   */
  spill(payload: Uint8Array): Uint8Array {
    const pending = this.records.view8();
    if (this.withCrc) this.crc = crc32Append(crc32Append(this.crc, pending), payload);
    return pending;
  }

  /**
   * The chunk's header fields and message indexes (sorted by channel id); `records` are the pending records still
   * in memory. Resets the channel indexes; the chunk stays open until `close()`. With `recordsCrc` false the CRC
   * covers the spilled records alone: the caller adds `records`' (`crc32Combine`), computed elsewhere.
   */
  seal(records: Uint8Array, recordsCrc = true): SealedChunk {
    const idx = this.indexBuffer;
    idx.reset();
    const ids = this.channelIds.sort((a, b) => a - b);
    const offsets: number[] = [];
    for (const id of ids) {
      offsets.push(idx.length);
      const index = this.indexes[id]!;
      writeMessageIndex(idx, id, index.entries, index.length, this.baseHi, this.baseLo);
      index.length = 0;
    }
    this.channelIds = [];
    return {
      startRel: this.startRel,
      endRel: this.endRel,
      uncompressedSize: this.size,
      crc: this.withCrc && recordsCrc ? crc32Append(this.crc, records) : this.crc,
      index: idx.view8(),
      indexIds: ids,
      indexOffsets: offsets,
      openedAt: this.openedAt,
    };
  }

  close(): void {
    this.isOpen = false;
    this.records.reset();
    this.size = 0;
    this.messages = 0;
  }
}

/** Opcode, length, channel, sequence, log and publish time of a Message record; the payload follows. */
export function encodeMessageHeader(
  b: ByteWriter,
  baseHi: number,
  baseLo: number,
  channelId: number,
  sequence: number,
  timeNs: number,
  size: number,
  publishNs: number | bigint,
): void {
  b.reserve(MESSAGE_HEADER + size);
  const v = b.view;
  const at = b.length;
  b.bytes[at] = Opcode.Message;
  const content = 22 + size;
  v.setUint32(at + 1, content >>> 0, true);
  v.setUint32(at + 5, Math.floor(content / TWO_32), true);
  v.setUint16(at + 9, channelId, true);
  v.setUint32(at + 11, sequence >>> 0, true);
  setTime(v, at + 15, baseHi, baseLo, timeNs);
  if (typeof publishNs === 'bigint') v.setBigUint64(at + 23, publishNs, true);
  else setTime(v, at + 23, baseHi, baseLo, publishNs);
  b.length = at + MESSAGE_HEADER;
}
