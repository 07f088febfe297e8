import { BagError } from '@vlink/bag-core';
import type { Codecs, ChunkCodec } from '../codecs.js';
import type { PipelinedCompressor } from '../compress/pipelined-compressor.js';
import type { Writable } from '../io/writable.js';
import { ChunkBuilder, encodeMessageHeader } from './chunk-builder.js';
import { DataSection } from './data-section.js';
import {
  writeAttachment,
  writeChannel,
  writeHeader,
  writeMagic,
  writeMetadata,
  writeSchema,
} from './record-encoder.js';
import type { AttachmentIndex, MetadataIndex } from './records.js';
import { writeFileTail } from './summary-writer.js';

/**
 * Added to every time offset inside the writer and taken off the time base, so an offset is never a small integer.
 * JavaScriptCore (Bun) compiles a function for the number kind it has seen: the offsets of a recording's first 2.1 s
 * fit an int32, the later ones are doubles, so each writer's first frames and its crossing made the chunk builder's
 * optimized code exit and be compiled again (5 writers of 200k frames: 530 exits, 230 with the bias; hand-measured,
 * 2026-12-07). A multiple of 8, so offsets stay exact (message-times.ts).
 */
const OFFSET_BIAS = 2 ** 32;

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
}

interface SchemaSlot {
  id: number;
  name: string;
  encoding: string;
  data: Uint8Array;
  written: boolean;
}

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
 *
 * Three parts, as `@mcap/core` separates them: this class keeps the registries (schemas, channels), the statistics
 * and the summary; `ChunkBuilder` the open chunk and its message indexes; `DataSection` the route of each byte to the
 * writable (loose records, chunks whole, through the compressor, or spilled) and the data-section CRC.
 */
export class McapWriter {
  private readonly w: Writable;
  private readonly opts: McapWriterOptions;
  private readonly chunking: boolean;
  private readonly direct: number;
  private readonly baseHi: number;
  private readonly baseLo: number;
  private readonly chunk: ChunkBuilder;
  private readonly data: DataSection;

  private readonly schemas: SchemaSlot[] = [];
  private readonly channels: ChannelSlot[] = [];
  private readonly metadataIndexes: Array<Omit<MetadataIndex, 'type'>> = [];
  private readonly attachmentIndexes: Array<Omit<AttachmentIndex, 'type'>> = [];

  // Statistics.
  private messageCount = 0;
  private startRel = 0;
  private endRel = 0;
  private schemasWritten = 0;
  private channelsWritten = 0;
  private metadataCount = 0;
  private ended = false;

  constructor(options: McapWriterOptions) {
    this.opts = options;
    this.w = options.writable;
    this.chunking = options.chunkSize > 0;
    const compression = this.chunking ? options.compression : '';
    let codec: ChunkCodec | undefined;
    if (compression) {
      codec = options.codecs[compression];
      if (!codec)
        throw new BagError('NOT_SUPPORTED', `no codec for chunk compression "${compression}"`, { file: options.file });
      if (!codec.compress) {
        throw new BagError('NOT_SUPPORTED', `chunk compression "${compression}" can be read but not written`, {
          file: options.file,
        });
      }
    }
    this.direct = options.directWriteThreshold ?? 64 * 1024;
    if (options.timeBase < 0n || options.timeBase >= 1n << 63n)
      throw new BagError('INVALID_ARGUMENT', 'time base out of range');
    // The base less the bias: the low half is the same, the high one 1 less (-1 for a base below 2^32: setTime adds).
    this.baseHi = Number(options.timeBase >> 32n) - 1;
    this.baseLo = Number(options.timeBase & 0xffffffffn);
    this.chunk = new ChunkBuilder(
      this.chunking ? Math.min(Math.max(options.chunkSize + 1024, 64 * 1024), 64 * 1024 * 1024) : 1024,
      this.baseHi,
      this.baseLo,
      options.chunkCrc,
    );
    this.data = new DataSection({
      writable: this.w,
      compression,
      codec,
      compressionLevel: options.compressionLevel,
      compressor: options.compressor,
      chunkCrc: options.chunkCrc,
      chunking: this.chunking,
      baseHi: this.baseHi,
      baseLo: this.baseLo,
      file: options.file,
    });
  }

  /** Writes the magic and the Header record. */
  start(): void {
    writeMagic(this.data.out);
    writeHeader(this.data.out, { profile: this.opts.profile, library: this.opts.library });
    this.data.flushOut();
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
    if (this.chunk.isOpen) this.chunk.added(writeSchema(this.chunk.records, s));
    else {
      this.data.markOut();
      writeSchema(this.data.out, s);
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
    this.channels.push({ id, schemaId, topic, messageEncoding, metadata, written: false, count: 0 });
    return id;
  }

  /**
   * Adds one message. `timeNs` (log time) is an offset from `timeBase` in ns: whole µs (a multiple of 8, so exact with
   * the bias), at most `MAX_LOG_OFFSET_US` µs (message-times.ts). `publishNs` defaults to the log time: a number is an
   * offset from `timeBase` like `timeNs` (may be negative, |n| < 2^52), a bigint an absolute time in ns (for publish
   * times far from the recording, e.g. a zero ROS header stamp).
   * The payload is copied or written before this returns: the caller may reuse it afterwards.
   */
  addMessage(
    channelId: number,
    sequence: number,
    timeNs: number,
    data: Uint8Array,
    publishNs: number | bigint = timeNs,
  ): void {
    const logRel = timeNs + OFFSET_BIAS;
    const publishRel = typeof publishNs === 'number' ? publishNs + OFFSET_BIAS : publishNs;
    const ch = this.channels[channelId - 1];
    if (!ch) throw new BagError('INTERNAL', `unknown channel id ${channelId}`);
    if (this.ended) throw new BagError('CLOSED', 'writer is closed', { file: this.opts.file });
    if (!ch.written) this.writeChannelRecord(ch);
    if (this.messageCount === 0) this.startRel = this.endRel = logRel;
    else if (logRel < this.startRel) this.startRel = logRel;
    else if (logRel > this.endRel) this.endRel = logRel;
    this.messageCount++;
    ch.count++;

    const size = data.length;
    if (!this.chunking) {
      this.data.markOut();
      encodeMessageHeader(this.data.out, this.baseHi, this.baseLo, channelId, sequence, logRel, size, publishRel);
      this.data.appendLoose(data, size >= this.direct);
      return;
    }

    const chunk = this.chunk;
    if (!chunk.isOpen) chunk.open();
    const full = chunk.addMessage(channelId, sequence, logRel, size, publishRel, this.opts.chunkSize);
    if (size >= this.direct && this.data.canSpill) this.data.spill(chunk, data);
    else chunk.records.raw(data);
    if (full) this.data.closeChunk(chunk);
  }

  /** Writes a Metadata record (outside chunks; an open chunk is closed first) and indexes it. */
  addMetadata(name: string, metadata: ReadonlyMap<string, string> | Iterable<readonly [string, string]>): void {
    if (this.ended) throw new BagError('CLOSED', 'writer is closed', { file: this.opts.file });
    this.data.closeChunk(this.chunk);
    this.data.settle();
    this.data.markOut();
    const offset = this.w.position() + this.data.out.length;
    const length = writeMetadata(this.data.out, { name, metadata: new Map(metadata) });
    this.metadataIndexes.push({ offset: BigInt(offset), length: BigInt(length), name });
    this.metadataCount++;
  }

  /** Writes an Attachment record (outside chunks; an open chunk is closed first) and indexes it. Times in ns. */
  addAttachment(name: string, mediaType: string, logTime: bigint, createTime: bigint, data: Uint8Array): void {
    if (this.ended) throw new BagError('CLOSED', 'writer is closed', { file: this.opts.file });
    this.data.closeChunk(this.chunk);
    this.data.settle();
    this.data.markOut();
    const offset = this.w.position() + this.data.out.length;
    const length = writeAttachment(this.data.out, { name, mediaType, logTime, createTime, data });
    this.attachmentIndexes.push({
      offset: BigInt(offset),
      length: BigInt(length),
      logTime,
      createTime,
      dataSize: BigInt(data.length),
      name,
      mediaType,
    });
    this.data.flushIfFull();
  }

  /** ms since the open chunk (or pending unchunked bytes) started collecting, or −1 when nothing is pending. */
  pendingAgeMs(now = Date.now()): number {
    return this.data.pendingAgeMs(this.chunk, now);
  }

  /** Closes the open chunk and writes every pending byte to the writable (no fsync). */
  flush(): void {
    this.data.closeChunk(this.chunk);
    this.data.flushOut();
    this.w.flush();
  }

  /** `flush` plus fsync. */
  sync(): void {
    this.flush();
    this.w.sync();
  }

  /** Bytes handed to the writable plus pending ones. */
  position(): number {
    return this.data.position(this.chunk);
  }

  /** Finishes the file: open chunk, DataEnd, summary, summary offsets, footer, magic; then fsync. Idempotent. */
  end(): void {
    if (this.ended) return;
    this.data.closeChunk(this.chunk);
    this.ended = true;
    // The loose records still in `out` come before DataEnd; nothing after it belongs to the data section.
    const dataSectionCrc = this.data.finish();
    const written = this.channels.filter((c) => c.written);
    writeFileTail(this.data.out, this.w.position(), {
      dataSectionCrc,
      schemas: this.schemas.filter((s) => s.written),
      channels: written,
      statistics: {
        messageCount: BigInt(this.messageCount),
        schemaCount: this.schemasWritten,
        channelCount: this.channelsWritten,
        attachmentCount: this.attachmentIndexes.length,
        metadataCount: this.metadataCount,
        chunkCount: this.data.chunkIndexes.length,
        messageStartTime: this.messageCount ? this.absTime(this.startRel) : 0n,
        messageEndTime: this.messageCount ? this.absTime(this.endRel) : 0n,
        channelMessageCounts: new Map(written.map((c) => [c.id, BigInt(c.count)])),
      },
      chunkIndexes: this.data.chunkIndexRecords((rel) => this.absTime(rel)),
      metadataIndexes: this.metadataIndexes,
      attachmentIndexes: this.attachmentIndexes,
    });
    this.data.flushOut();
    this.w.flush();
    this.w.sync();
  }

  /** Statistics so far (what the summary will say). */
  stats(): { messageCount: number; chunkCount: number; metadataCount: number } {
    return {
      messageCount: this.messageCount,
      chunkCount: this.data.chunkIndexes.length,
      metadataCount: this.metadataCount,
    };
  }

  /** The absolute time of an offset of this writer (one with the bias). */
  private absTime(rel: number): bigint {
    return this.opts.timeBase + BigInt(rel - OFFSET_BIAS);
  }

  private writeChannelRecord(ch: ChannelSlot): void {
    if (ch.schemaId !== 0) {
      const s = this.schemas[ch.schemaId - 1]!;
      if (!s.written) {
        if (this.chunking && !this.chunk.isOpen) this.chunk.open();
        this.writeSchemaNow(s.id);
      }
    }
    ch.written = true;
    this.channelsWritten++;
    if (this.chunking) {
      if (!this.chunk.isOpen) this.chunk.open();
      this.chunk.added(writeChannel(this.chunk.records, ch));
    } else {
      this.data.markOut();
      writeChannel(this.data.out, ch);
    }
  }
}
