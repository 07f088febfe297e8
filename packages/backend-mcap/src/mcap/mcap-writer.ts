import { BagError } from '@vlink/bag-core';
import type { Codecs, ChunkCodec } from '../codecs.js';
import type { PipelinedCompressor } from '../compress/pipelined-compressor.js';
import type { Writable } from '../io/writable.js';
import { ByteWriter } from './byte-writer.js';
import { Opcode, TWO_32 } from './constants.js';
import { crc32Append, crc32Combine } from './crc32.js';
import { PLAIN_CHUNK_HEADER, writeChunkHeader, writeMessageIndex } from './chunk-encoders.js';
import {
  writeAttachment,
  writeChannel,
  writeHeader,
  writeMagic,
  writeMetadata,
  writeSchema,
} from './record-encoder.js';
import type { AttachmentIndex, ChunkIndex, MetadataIndex } from './records.js';
import { writeFileTail } from './summary-writer.js';
import { setTime } from './time-split.js';

export interface McapWriterOptions {
  writable: Writable;
  codecs: Codecs;
  profile: string;
  library: string;
  /** Uncompressed bytes after which a chunk is closed; ≤ 0 writes records outside chunks (no compression then). */
  chunkSize: number;
  /** MCAP compression name for chunks: `''` (none) or a codec with `compress` (`zstd`). */
  compression: string;
  /** Level handed to the codec's `compress`. */
  compressionLevel: number;
  /**
   * Compresses chunks while the next one is filled (`compression` must be the codec it implements); chunks it cannot
   * take are compressed with the codec. The file is the same either way.
   */
  compressor?: PipelinedCompressor;
  /**
   * Checksums: each chunk's `uncompressed_crc` and the DataEnd `data_section_crc` (0 = not computed, as MCAP
   * allows). Each byte is checksummed once: an uncompressed chunk's records CRC also serves the data section's.
   */
  chunkCrc: boolean;
  /** Absolute time in ns since the epoch that message time offsets count from. */
  timeBase: bigint;
  /**
   * Payloads of at least this many bytes in uncompressed chunks are handed to the writable as they are (vectored
   * write, chunk header patched afterwards) instead of being copied into the chunk buffer. Default 64 KiB.
   */
  directWriteThreshold?: number;
  /** For error messages. */
  file?: string;
}

interface ChannelSlot {
  id: number;
  schemaId: number;
  topic: string;
  messageEncoding: string;
  metadata: ReadonlyMap<string, string>;
  written: boolean;
  count: number;
  /** Message index of the open chunk: log time offsets and record offsets, interleaved; `indexLength` used. */
  index: Float64Array;
  indexLength: number;
}

interface SchemaSlot {
  id: number;
  name: string;
  encoding: string;
  data: Uint8Array;
  written: boolean;
}

/** A chunk whose records are complete, before compression. */
interface SealedChunk {
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

interface ChunkEntry {
  startRel: number;
  endRel: number;
  offset: number;
  length: number;
  indexOffsets: Map<number, bigint>;
  indexLength: number;
  compression: string;
  storedSize: number;
  uncompressedSize: number;
}

/** Records outside chunks are buffered up to this size before a write. */
const OUT_FLUSH = 1024 * 1024;
/** As mcap's C++ writer: chunks below 1 KiB, or saving less than 2 %, are stored uncompressed. */
const MIN_COMPRESS_SIZE = 1024;
const MIN_COMPRESS_RATIO = 1.02;

const EMPTY_METADATA: ReadonlyMap<string, string> = new Map();

/**
 * A fast, synchronous MCAP writer. Compared with `@mcap/core`'s `McapWriter` it encodes records straight into one
 * reusable chunk buffer (no per-record builders, no bigint per message), computes the chunk CRC only when asked
 * and never a data-section CRC, and for uncompressed chunks hands big payloads to the OS as they are: the chunk
 * header is written ahead as a placeholder and patched with `writeAt` when the chunk closes.
 *
 * Message times are offsets in ns (numbers) from `timeBase`; publish time equals log time (VLink's mapping) unless
 * given.
 * Schema and channel records are written lazily, inside the chunk of the first message that needs them.
 *
 * With a `compressor`, a full chunk is handed to it and written once the next one is full (or at any flush, metadata
 * record or the end): the writer keeps filling chunks while the last one is compressed elsewhere, and the bytes that
 * reach the writable are the same as without it.
 */
export class McapWriter {
  private readonly w: Writable;
  private readonly opts: McapWriterOptions;
  private readonly codec: ChunkCodec | undefined;
  private readonly chunking: boolean;
  private readonly direct: number;
  private readonly canSpill: boolean;
  private readonly baseHi: number;
  private readonly baseLo: number;

  /** Pending bytes of the data section outside any chunk. */
  private readonly out = new ByteWriter(256 * 1024);
  /** Pending records of the open chunk. */
  private readonly chunk: ByteWriter;
  private readonly scratch = new ByteWriter(4096);

  private readonly schemas: SchemaSlot[] = [];
  private readonly channels: ChannelSlot[] = [];
  private readonly chunkIndexes: ChunkEntry[] = [];
  private readonly metadataIndexes: Array<Omit<MetadataIndex, 'type'>> = [];
  private readonly attachmentIndexes: Array<Omit<AttachmentIndex, 'type'>> = [];

  // Open chunk state.
  private chunkOpen = false;
  private chunkOpenedAt = 0;
  private chunkRecords = 0;
  private chunkMessages = 0;
  private chunkStartRel = 0;
  private chunkEndRel = 0;
  /** CRC of the open chunk's records so far (those already spilled to disk). */
  private chunkCrc = 0;
  /** CRC of every data-section byte handed to the writable, in file order (see `trackData`). */
  private dataCrc = 0;
  /** A spilled chunk: the data-section CRC up to its placeholder header, which is only known at close. */
  private dataCrcBeforeSpill = 0;
  private chunkChannels: number[] = [];
  /** File offset of the placeholder header once part of the chunk went to disk, else −1. */
  private spilledAt = -1;
  private outSince = 0;
  /** Chunks handed to `compressor` and not written yet, oldest first: nothing else reaches the writable before them. */
  private readonly pending: SealedChunk[] = [];

  // Statistics.
  private messageCount = 0;
  private startRel = 0;
  private endRel = 0;
  private schemasWritten = 0;
  private channelsWritten = 0;
  private metadataCount = 0;
  private chunkCount = 0;
  private ended = false;

  constructor(options: McapWriterOptions) {
    this.opts = options;
    this.w = options.writable;
    this.chunking = options.chunkSize > 0;
    const compression = this.chunking ? options.compression : '';
    if (compression) {
      const codec = options.codecs[compression];
      if (!codec)
        throw new BagError('NOT_SUPPORTED', `no codec for chunk compression "${compression}"`, { file: options.file });
      if (!codec.compress) {
        throw new BagError('NOT_SUPPORTED', `chunk compression "${compression}" can be read but not written`, {
          file: options.file,
        });
      }
      this.codec = codec;
    }
    this.direct = options.directWriteThreshold ?? 64 * 1024;
    this.canSpill =
      this.chunking && !this.codec && typeof this.w.writev === 'function' && typeof this.w.writeAt === 'function';
    this.chunk = new ByteWriter(
      this.chunking ? Math.min(Math.max(options.chunkSize + 1024, 64 * 1024), 64 * 1024 * 1024) : 1024,
    );
    if (options.timeBase < 0n || options.timeBase >= 1n << 63n)
      throw new BagError('INVALID_ARGUMENT', 'time base out of range');
    this.baseHi = Number(options.timeBase >> 32n);
    this.baseLo = Number(options.timeBase & 0xffffffffn);
  }

  /** Writes the magic and the Header record. */
  start(): void {
    writeMagic(this.out);
    writeHeader(this.out, { profile: this.opts.profile, library: this.opts.library });
    this.flushOut();
  }

  /** Registers a schema (id 1, 2, … in order); its record is written by `writeSchemaNow` or with its first channel. */
  addSchema(name: string, encoding: string, data: Uint8Array): number {
    const id = this.schemas.length + 1;
    if (id > 0xffff)
      throw new BagError('LIMIT_REACHED', 'more than 65535 schemas in one MCAP file', { file: this.opts.file });
    this.schemas.push({ id, name, encoding, data: data.slice(), written: false });
    return id;
  }

  /** Writes a registered schema's record now: into the open chunk, else into the data section. */
  writeSchemaNow(id: number): void {
    const s = this.schemas[id - 1];
    if (!s || s.written) return;
    s.written = true;
    this.schemasWritten++;
    if (this.chunkOpen) this.chunkRecords += writeSchema(this.chunk, s);
    else {
      this.markOut();
      writeSchema(this.out, s);
    }
  }

  /** Registers a channel (id 1, 2, …); its record is written before its first message. */
  addChannel(
    topic: string,
    messageEncoding: string,
    schemaId: number,
    metadata: ReadonlyMap<string, string> = EMPTY_METADATA,
  ): number {
    const id = this.channels.length + 1;
    if (id > 0xffff)
      throw new BagError('LIMIT_REACHED', 'more than 65535 channels in one MCAP file', { file: this.opts.file });
    if (schemaId !== 0 && !this.schemas[schemaId - 1]) throw new BagError('INTERNAL', `unknown schema id ${schemaId}`);
    this.channels.push({
      id,
      schemaId,
      topic,
      messageEncoding,
      metadata,
      written: false,
      count: 0,
      index: new Float64Array(64),
      indexLength: 0,
    });
    return id;
  }

  /**
   * Adds one message. `timeNs` (log time) and `publishNs` (publish time, default: the log time) are offsets from
   * `timeBase` in ns (integers, |value| < 2^53). The payload is copied or written before this returns: the caller
   * may reuse it afterwards.
   */
  /**
   * `publishNs` defaults to the log time: a number is an offset from `timeBase` like `timeNs` (may be negative, |n| <
   * 2^53), a bigint an absolute time in ns (for publish times far from the recording, e.g. a zero ROS header stamp).
   */
  addMessage(
    channelId: number,
    sequence: number,
    timeNs: number,
    data: Uint8Array,
    publishNs: number | bigint = timeNs,
  ): void {
    const ch = this.channels[channelId - 1];
    if (!ch) throw new BagError('INTERNAL', `unknown channel id ${channelId}`);
    if (this.ended) throw new BagError('CLOSED', 'writer is closed', { file: this.opts.file });
    if (!ch.written) this.writeChannelRecord(ch);
    if (this.messageCount === 0) this.startRel = this.endRel = timeNs;
    else if (timeNs < this.startRel) this.startRel = timeNs;
    else if (timeNs > this.endRel) this.endRel = timeNs;
    this.messageCount++;
    ch.count++;

    const size = data.length;
    if (!this.chunking) {
      this.markOut();
      this.encodeMessage(this.out, channelId, sequence, timeNs, size, publishNs);
      if (size >= this.direct && this.w.writev) {
        const head = this.out.view8();
        this.trackData(head);
        this.trackData(data);
        this.w.writev([head, data]);
        this.out.reset();
      } else {
        this.out.raw(data);
        if (this.out.length >= OUT_FLUSH) this.flushOut();
      }
      return;
    }

    if (!this.chunkOpen) this.openChunk();
    if (this.chunkMessages === 0) this.chunkStartRel = this.chunkEndRel = timeNs;
    else if (timeNs < this.chunkStartRel) this.chunkStartRel = timeNs;
    else if (timeNs > this.chunkEndRel) this.chunkEndRel = timeNs;
    this.chunkMessages++;
    let n = ch.indexLength;
    if (n === 0) this.chunkChannels.push(channelId);
    else if (n === ch.index.length) {
      const grown = new Float64Array(n * 2);
      grown.set(ch.index);
      ch.index = grown;
    }
    ch.index[n++] = timeNs;
    ch.index[n++] = this.chunkRecords;
    ch.indexLength = n;

    const c = this.chunk;
    this.encodeMessage(c, channelId, sequence, timeNs, size, publishNs);
    if (size >= this.direct && this.canSpill) this.spill(data);
    else c.raw(data);
    this.chunkRecords += 31 + size;
    if (this.chunkRecords >= this.opts.chunkSize) this.closeChunk();
  }

  /** Writes a Metadata record (outside chunks; an open chunk is closed first) and indexes it. */
  addMetadata(name: string, metadata: ReadonlyMap<string, string> | Iterable<readonly [string, string]>): void {
    if (this.ended) throw new BagError('CLOSED', 'writer is closed', { file: this.opts.file });
    this.closeChunk();
    this.settle();
    this.markOut();
    const offset = this.w.position() + this.out.length;
    const length = writeMetadata(this.out, { name, metadata: new Map(metadata) });
    this.metadataIndexes.push({ offset: BigInt(offset), length: BigInt(length), name });
    this.metadataCount++;
  }

  /** Writes an Attachment record (outside chunks; an open chunk is closed first) and indexes it. Times in ns. */
  addAttachment(name: string, mediaType: string, logTime: bigint, createTime: bigint, data: Uint8Array): void {
    if (this.ended) throw new BagError('CLOSED', 'writer is closed', { file: this.opts.file });
    this.closeChunk();
    this.settle();
    this.markOut();
    const offset = this.w.position() + this.out.length;
    const length = writeAttachment(this.out, { name, mediaType, logTime, createTime, data });
    this.attachmentIndexes.push({
      offset: BigInt(offset),
      length: BigInt(length),
      logTime,
      createTime,
      dataSize: BigInt(data.length),
      name,
      mediaType,
    });
    if (this.out.length >= OUT_FLUSH) this.flushOut();
  }

  /** ms since the open chunk (or pending unchunked bytes) started collecting, or −1 when nothing is pending. */
  pendingAgeMs(now = Date.now()): number {
    if (this.pending.length > 0) return now - this.pending[0]!.openedAt;
    if (this.chunkOpen) return now - this.chunkOpenedAt;
    if (this.out.length > 0) return now - this.outSince;
    return -1;
  }

  /** Closes the open chunk and writes every pending byte to the writable (no fsync). */
  flush(): void {
    this.closeChunk();
    this.flushOut();
    this.w.flush();
  }

  /** `flush` plus fsync. */
  sync(): void {
    this.flush();
    this.w.sync();
  }

  /** Bytes handed to the writable plus pending ones. */
  position(): number {
    const open = this.chunkOpen ? (this.spilledAt < 0 ? PLAIN_CHUNK_HEADER : 0) + this.chunk.length : 0;
    // A chunk in compression counts at its uncompressed size, as the open one does.
    let pending = 0;
    for (const p of this.pending)
      pending += (p.before?.length ?? 0) + PLAIN_CHUNK_HEADER + p.uncompressedSize + p.index.length;
    return this.w.position() + this.out.length + pending + open;
  }

  /** Finishes the file: open chunk, DataEnd, summary, summary offsets, footer, magic; then fsync. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.closeChunk();
    this.settle();
    this.ended = true;
    const written = this.channels.filter((c) => c.written);
    // The loose records still in `out` come before DataEnd; nothing after it belongs to the data section.
    const dataSectionCrc = this.opts.chunkCrc ? crc32Append(this.dataCrc, this.out.view8()) : 0;
    writeFileTail(this.out, this.w.position(), {
      dataSectionCrc,
      schemas: this.schemas.filter((s) => s.written),
      channels: written,
      statistics: {
        messageCount: BigInt(this.messageCount),
        schemaCount: this.schemasWritten,
        channelCount: this.channelsWritten,
        attachmentCount: this.attachmentIndexes.length,
        metadataCount: this.metadataCount,
        chunkCount: this.chunkCount,
        messageStartTime: this.messageCount ? this.absTime(this.startRel) : 0n,
        messageEndTime: this.messageCount ? this.absTime(this.endRel) : 0n,
        channelMessageCounts: new Map(written.map((c) => [c.id, BigInt(c.count)])),
      },
      chunkIndexes: this.chunkIndexes.map((c) => this.chunkIndexRecord(c)),
      metadataIndexes: this.metadataIndexes,
      attachmentIndexes: this.attachmentIndexes,
    });
    this.flushOut();
    this.w.flush();
    this.w.sync();
  }

  /** Statistics so far (what the summary will say). */
  stats(): { messageCount: number; chunkCount: number; metadataCount: number } {
    return { messageCount: this.messageCount, chunkCount: this.chunkCount, metadataCount: this.metadataCount };
  }

  // --- internals -------------------------------------------------------------------------------------------------

  private absTime(rel: number): bigint {
    return this.opts.timeBase + BigInt(rel);
  }

  private markOut(): void {
    if (this.out.length === 0) this.outSince = Date.now();
  }

  private flushOut(): void {
    this.settle();
    if (this.out.length === 0) return;
    const bytes = this.out.view8();
    this.trackData(bytes);
    this.w.write(bytes);
    this.out.reset();
  }

  /** Adds bytes about to reach the writable (in file order) to the data-section CRC. */
  private trackData(bytes: Uint8Array): void {
    if (this.opts.chunkCrc && !this.ended && bytes.length > 0) this.dataCrc = crc32Append(this.dataCrc, bytes);
  }

  private openChunk(): void {
    this.chunkOpen = true;
    this.chunkOpenedAt = Date.now();
    this.chunkRecords = 0;
    this.chunkMessages = 0;
    this.chunkCrc = 0;
    this.spilledAt = -1;
    this.chunk.reset();
  }

  private writeChannelRecord(ch: ChannelSlot): void {
    if (ch.schemaId !== 0) {
      const s = this.schemas[ch.schemaId - 1]!;
      if (!s.written) {
        if (this.chunking && !this.chunkOpen) this.openChunk();
        this.writeSchemaNow(s.id);
      }
    }
    ch.written = true;
    this.channelsWritten++;
    if (this.chunking) {
      if (!this.chunkOpen) this.openChunk();
      this.chunkRecords += writeChannel(this.chunk, ch);
    } else {
      this.markOut();
      writeChannel(this.out, ch);
    }
  }

  /** Opcode, length, channel, sequence, log and publish time; the payload follows. */
  private encodeMessage(
    b: ByteWriter,
    channelId: number,
    sequence: number,
    timeNs: number,
    size: number,
    publishNs: number | bigint,
  ): void {
    b.reserve(31 + size);
    const v = b.view;
    const at = b.length;
    b.bytes[at] = Opcode.Message;
    const content = 22 + size;
    v.setUint32(at + 1, content >>> 0, true);
    v.setUint32(at + 5, Math.floor(content / TWO_32), true);
    v.setUint16(at + 9, channelId, true);
    v.setUint32(at + 11, sequence >>> 0, true);
    setTime(v, at + 15, this.baseHi, this.baseLo, timeNs);
    if (typeof publishNs === 'bigint') v.setBigUint64(at + 23, publishNs, true);
    else setTime(v, at + 23, this.baseHi, this.baseLo, publishNs);
    b.length = at + 31;
  }

  /** Sends the chunk's pending records and `payload` to disk now; the header is patched at close. */
  private spill(payload: Uint8Array): void {
    this.settle();
    const parts: Uint8Array[] = [];
    if (this.out.length > 0) {
      parts.push(this.out.view8());
      this.trackData(this.out.view8());
    }
    if (this.spilledAt < 0) {
      this.spilledAt = this.w.position() + this.out.length;
      // The data-section CRC goes on from here once the header is known (writeSpilled).
      this.dataCrcBeforeSpill = this.dataCrc;
      // Placeholder: a chunk opcode with length 0, so a crash mid-chunk leaves a record scanners stop at.
      const s = this.scratch;
      s.reset();
      s.reserve(PLAIN_CHUNK_HEADER);
      s.bytes.fill(0, 0, PLAIN_CHUNK_HEADER);
      s.bytes[0] = Opcode.Chunk;
      s.length = PLAIN_CHUNK_HEADER;
      parts.push(s.view8());
    }
    const records = this.chunk.view8();
    if (this.opts.chunkCrc) {
      this.chunkCrc = crc32Append(this.chunkCrc, records);
      this.chunkCrc = crc32Append(this.chunkCrc, payload);
    }
    parts.push(records, payload);
    this.w.writev!(parts);
    this.out.reset();
    this.chunk.reset();
  }

  private closeChunk(): void {
    if (!this.chunkOpen) return;
    this.chunkOpen = false;
    if (this.chunkMessages === 0) {
      // Only schema/channel records: they are valid outside a chunk too, so no message-less chunk is written.
      this.markOut();
      this.out.raw(this.chunk.view8());
      this.chunk.reset();
      this.chunkRecords = 0;
      return;
    }
    const records = this.chunk.view8();
    const sealed = this.seal(records);
    if (this.spilledAt >= 0) this.writeSpilled(sealed, records);
    else if (!this.handToCompressor(sealed, records)) {
      this.settle();
      let compressed: Uint8Array | undefined;
      if (this.codec && this.chunkRecords >= MIN_COMPRESS_SIZE) {
        try {
          compressed = this.codec.compress!(records, this.opts.compressionLevel);
        } catch (error) {
          throw BagError.wrap(error, 'INTERNAL', `${this.opts.compression} compression failed`, {
            file: this.opts.file,
          });
        }
      }
      this.writeChunk(sealed, records, compressed, this.out.length > 0 ? this.out.view8() : undefined);
      this.out.reset();
    }
    this.chunk.reset();
    this.chunkRecords = 0;
    this.chunkMessages = 0;
    this.spilledAt = -1;
  }

  /** The chunk's header fields and message indexes; resets the channels' open indexes. */
  private seal(records: Uint8Array): SealedChunk {
    const idx = this.scratch;
    idx.reset();
    // Message indexes, sorted by channel id, written right after the chunk.
    const ids = this.chunkChannels.sort((a, b) => a - b);
    const offsets: number[] = [];
    for (const id of ids) {
      const ch = this.channels[id - 1]!;
      offsets.push(idx.length);
      writeMessageIndex(idx, id, ch.index, ch.indexLength, this.baseHi, this.baseLo);
      ch.indexLength = 0;
    }
    this.chunkChannels = [];
    return {
      startRel: this.chunkStartRel,
      endRel: this.chunkEndRel,
      uncompressedSize: this.chunkRecords,
      crc: this.opts.chunkCrc ? crc32Append(this.chunkCrc, records) : 0,
      index: idx.view8(),
      indexIds: ids,
      indexOffsets: offsets,
      openedAt: this.chunkOpenedAt,
    };
  }

  /**
   * Hands the chunk to the compressor, then writes the one it was compressing before (waiting for it if need be): the
   * compressor goes straight on with this chunk while the writer waits, writes and fills the next. The chunk itself
   * is written by a later `settle`. False when there is no compressor or it cannot take the chunk.
   */
  private handToCompressor(sealed: SealedChunk, records: Uint8Array): boolean {
    const compressor = this.opts.compressor;
    if (!compressor || !this.codec || sealed.uncompressedSize < MIN_COMPRESS_SIZE) return false;
    if (!compressor.start(records, this.opts.compressionLevel)) return false;
    // The scratch buffer that holds the index, and `out`, are reused before the chunk is written.
    this.pending.push({
      ...sealed,
      index: sealed.index.slice(),
      ...(this.out.length > 0 ? { before: this.out.view8().slice() } : {}),
    });
    this.out.reset();
    while (this.pending.length > 1) this.settleOldest();
    return true;
  }

  /** Writes the chunks in compression, if any (waiting for them): before any other byte reaches the writable. */
  private settle(): void {
    while (this.pending.length > 0) this.settleOldest();
  }

  private settleOldest(): void {
    const sealed = this.pending.shift()!;
    let result: { records: Uint8Array; compressed: Uint8Array | undefined };
    try {
      result = this.opts.compressor!.finish();
    } catch (error) {
      throw BagError.wrap(error, 'INTERNAL', `${this.opts.compression} compression failed`, { file: this.opts.file });
    }
    this.writeChunk(sealed, result.records, result.compressed, sealed.before);
  }

  /**
   * Writes a chunk that is whole in memory, after `before`: header, records (`compressed` unless it saved too
   * little), message indexes.
   */
  private writeChunk(
    sealed: SealedChunk,
    records: Uint8Array,
    compressed: Uint8Array | undefined,
    before: Uint8Array | undefined,
  ): void {
    const useCompressed = compressed !== undefined && records.length / compressed.length >= MIN_COMPRESS_RATIO;
    const stored = useCompressed ? compressed : records;
    const compression = useCompressed ? this.opts.compression : '';
    const header = this.chunkHeader(sealed, compression, stored.length);
    const chunkOffset = this.w.position() + (before?.length ?? 0);
    const parts = before ? [before, header, stored, sealed.index] : [header, stored, sealed.index];
    if (this.opts.chunkCrc) {
      if (before) this.trackData(before);
      this.trackData(header);
      // Stored uncompressed, the records are what the chunk CRC covers: no second pass over them.
      if (useCompressed) this.trackData(stored);
      else this.dataCrc = crc32Combine(this.dataCrc, sealed.crc, stored.length);
      this.trackData(sealed.index);
    }
    if (this.w.writev) this.w.writev(parts);
    else for (const p of parts) this.w.write(p);
    this.addChunkEntry(sealed, chunkOffset, header.length, stored.length, compression);
  }

  /** Finishes a spilled chunk: its records are partly on disk already, after a placeholder header patched now. */
  private writeSpilled(sealed: SealedChunk, records: Uint8Array): void {
    const header = this.chunkHeader(sealed, '', sealed.uncompressedSize);
    if (header.length !== PLAIN_CHUNK_HEADER)
      throw new BagError('INTERNAL', 'chunk header size changed after spilling');
    const parts: Uint8Array[] = [];
    if (records.length > 0) parts.push(records);
    if (sealed.index.length > 0) parts.push(sealed.index);
    if (parts.length) this.w.writev!(parts);
    this.w.writeAt!(header, this.spilledAt);
    if (this.opts.chunkCrc) {
      const withHeader = crc32Append(this.dataCrcBeforeSpill, header);
      this.dataCrc = crc32Combine(withHeader, sealed.crc, sealed.uncompressedSize);
      this.trackData(sealed.index);
    }
    this.addChunkEntry(sealed, this.spilledAt, header.length, sealed.uncompressedSize, '');
  }

  private chunkHeader(sealed: SealedChunk, compression: string, recordsLength: number): Uint8Array {
    const header = new ByteWriter(64);
    writeChunkHeader(header, this.baseHi, this.baseLo, {
      startRel: sealed.startRel,
      endRel: sealed.endRel,
      uncompressedSize: sealed.uncompressedSize,
      crc: sealed.crc,
      compression,
      recordsLength,
    });
    return header.view8();
  }

  private addChunkEntry(
    sealed: SealedChunk,
    offset: number,
    headerLength: number,
    storedSize: number,
    compression: string,
  ): void {
    const length = headerLength + storedSize;
    const indexOffsets = new Map<number, bigint>();
    for (let i = 0; i < sealed.indexIds.length; i++)
      indexOffsets.set(sealed.indexIds[i]!, BigInt(offset + length + sealed.indexOffsets[i]!));
    this.chunkIndexes.push({
      startRel: sealed.startRel,
      endRel: sealed.endRel,
      offset,
      length,
      indexOffsets,
      indexLength: sealed.index.length,
      compression,
      storedSize,
      uncompressedSize: sealed.uncompressedSize,
    });
    this.chunkCount++;
  }

  private chunkIndexRecord(c: ChunkEntry): Omit<ChunkIndex, 'type'> {
    return {
      messageStartTime: this.absTime(c.startRel),
      messageEndTime: this.absTime(c.endRel),
      chunkStartOffset: BigInt(c.offset),
      chunkLength: BigInt(c.length),
      messageIndexOffsets: c.indexOffsets,
      messageIndexLength: BigInt(c.indexLength),
      compression: c.compression,
      compressedSize: BigInt(c.storedSize),
      uncompressedSize: BigInt(c.uncompressedSize),
    };
  }
}
