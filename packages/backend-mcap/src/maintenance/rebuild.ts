import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import type { Writable } from '../io/writable.js';
import { ByteWriter } from '../mcap/byte-writer.js';
import { MAGIC, Opcode } from '../mcap/constants.js';
import { crc32 } from '../mcap/crc32.js';
import { parseRecord } from '../mcap/record-parser.js';
import { writeChannel, writeMetadata } from '../mcap/record-encoder.js';
import type { Channel, Chunk, ChunkIndex, Metadata, MetadataIndex, Schema } from '../mcap/records.js';
import { readHeader } from '../mcap/summary.js';
import { writeFileTail } from '../mcap/summary-writer.js';
import { CHANNEL_METADATA_PREFIX, HEADER_METADATA, VLINK_PROFILE } from '../vcap/vcap-format.js';
import { walkDataSection, type InnerRecord, type WalkItem } from './data-walk.js';
import { sameChannel, sameSchema } from './records-equal.js';
import { channelMetadataEntries, ChannelTally } from './vlink-channel-meta.js';
import { headerNeedsRepair, repairedHeader } from './vlink-header.js';

/** What a repair kept and what it had to leave out. */
export interface VcapFixReport {
  /** Messages in the repaired file. */
  kept: number;
  /** Chunk records that did not decode (bad CRC, compression or structure) and were left out with their messages. */
  droppedChunks: number;
  /** Data-section bytes left out: damaged chunks and records, unreadable stretches, a truncated tail. */
  droppedBytes: number;
  /** Messages of otherwise intact chunks left out because their channel record was lost with a damaged chunk. */
  droppedMessages: number;
  /** `VLinkChannel_*` records written or corrected from the channels and the counts (VLink files only). */
  rebuiltChannelMetadata: number;
  /**
   * The `VLinkHeader` was lost or had unusable values and was written again: usable values kept, the rest derived or
   * placeholders (process `Unknown`, timezone 0; date and start from each other or the first message).
   */
  rebuiltHeader: boolean;
  /** False when the file already passed `check()` and was left alone. */
  rewritten: boolean;
}

/** Buffers small records so a file of loose messages is not written one syscall per record. */
class Sink {
  private readonly pending = new ByteWriter(1024 * 1024);
  constructor(private readonly out: Writable) {}
  position(): number {
    return this.out.position() + this.pending.length;
  }
  write(bytes: Uint8Array): void {
    if (bytes.length >= 256 * 1024) {
      this.flush();
      this.out.write(bytes);
      return;
    }
    this.pending.raw(bytes);
    if (this.pending.length >= 1024 * 1024) this.flush();
  }
  flush(): void {
    if (this.pending.length === 0) return;
    this.out.write(this.pending.view8());
    this.pending.reset();
  }
}

/**
 * Rewrites a `.vcap` (or any MCAP file) from `source` into `sink` as a complete file: the header, every usable record
 * of the data section in order (intact chunks byte for byte), fresh message indexes, `VLinkChannel_*` records
 * reconstructed from the channels and counts, then DataEnd, a summary computed from what was kept, and the footer.
 * Damaged chunks and garbage are left out and counted; the walk resynchronises after them (see `walkDataSection`).
 * Throws `CORRUPT_FILE` when not even the MCAP header is readable.
 */
export function rebuildVcap(source: Readable, sink: Writable, codecs: Codecs, file?: string): VcapFixReport {
  const { header, headerEnd } = readHeader(source, file);
  return new Rebuilder(source, new Sink(sink), codecs, header.profile === VLINK_PROFILE, file).run(headerEnd);
}

class Rebuilder {
  private readonly schemas = new Map<number, Schema>();
  private readonly channels = new Map<number, Channel>();
  private readonly tallies = new Map<number, ChannelTally>();
  private readonly chunkIndexes: Array<Omit<ChunkIndex, 'type'>> = [];
  private readonly metadataIndexes: Array<Omit<MetadataIndex, 'type'>> = [];
  /** VLinkChannel_<id> records found, by id; written again (corrected where needed) at the end. */
  private readonly channelMetadata = new Map<number, Metadata>();
  private readonly compressions = new Set<string>();
  /** The VLinkHeader found (undefined: lost) and whether it was copied as it was. */
  private header: ReadonlyMap<string, string> | undefined;
  private headerWritten = false;
  private messageCount = 0;
  private startTime = 0n;
  private endTime = 0n;
  private attachmentCount = 0;
  private readonly scratch = new ByteWriter(64 * 1024);
  readonly report: VcapFixReport = {
    kept: 0, droppedChunks: 0, droppedBytes: 0, droppedMessages: 0, rebuiltChannelMetadata: 0, rebuiltHeader: false, rewritten: true,
  };

  constructor(
    private readonly source: Readable,
    private readonly out: Sink,
    private readonly codecs: Codecs,
    private readonly vlink: boolean,
    private readonly file: string | undefined,
  ) {}

  run(headerEnd: number): VcapFixReport {
    this.out.write(MAGIC);
    this.out.write(this.source.read(MAGIC.length, headerEnd - MAGIC.length).slice());
    walkDataSection(this.source, headerEnd, this.source.size(), { codecs: this.codecs, validateCrcs: true, resync: true, ...(this.file === undefined ? {} : { file: this.file }) }, (item) =>
      this.visit(item),
    );
    if (this.vlink) this.writeVlinkMetadata();
    const tail = new ByteWriter(64 * 1024);
    const ids = [...this.channels.keys()].sort((a, b) => a - b);
    writeFileTail(tail, this.out.position(), {
      schemas: [...this.schemas.values()].sort((a, b) => a.id - b.id),
      channels: ids.map((id) => this.channels.get(id)!),
      statistics: {
        messageCount: BigInt(this.messageCount),
        schemaCount: this.schemas.size,
        channelCount: this.channels.size,
        attachmentCount: this.attachmentCount,
        metadataCount: this.metadataIndexes.length,
        chunkCount: this.chunkIndexes.length,
        messageStartTime: this.startTime,
        messageEndTime: this.endTime,
        channelMessageCounts: new Map(ids.map((id) => [id, BigInt(this.tallies.get(id)?.count ?? 0)])),
      },
      chunkIndexes: this.chunkIndexes,
      metadataIndexes: this.metadataIndexes,
    });
    this.out.write(tail.view8());
    this.out.flush();
    this.report.kept = this.messageCount;
    return this.report;
  }

  private visit(item: WalkItem): void {
    switch (item.kind) {
      case 'damaged':
        this.report.droppedBytes += item.length;
        if (item.chunk) this.report.droppedChunks++;
        return;
      case 'end':
        return;
      case 'chunk':
        return this.chunk(item);
      case 'record':
        return this.record(item);
    }
  }

  private record(item: Extract<WalkItem, { kind: 'record' }>): void {
    const bytes = item.buf.subarray(item.at, item.at + item.length);
    const parsed = item.parsed;
    switch (item.opcode) {
      case Opcode.Message: {
        const channelId = item.view.getUint16(item.at + 9, true);
        if (!this.channels.has(channelId)) return this.dropMessage(item.length);
        this.countMessage(channelId, item.view.getBigUint64(item.at + 15, true), item.length - 31);
        return this.out.write(bytes);
      }
      case Opcode.Schema:
      case Opcode.Channel: {
        const kept = this.define(parsed as Schema | Channel);
        if (kept === 'drop') this.report.droppedBytes += item.length;
        else this.out.write(kept === 'keep' ? bytes : kept);
        return;
      }
      case Opcode.Metadata: {
        const m = parsed as Metadata;
        if (this.vlink && m.name.startsWith(CHANNEL_METADATA_PREFIX)) {
          const idText = m.name.slice(CHANNEL_METADATA_PREFIX.length);
          const id = /^\d+$/.test(idText) ? Number(idText) : NaN;
          // Written again at the end, corrected from the counts; duplicates and unparsable names are left out.
          if (!this.channelMetadata.has(id) && Number.isInteger(id)) this.channelMetadata.set(id, m);
          return;
        }
        if (m.name === HEADER_METADATA && this.vlink) {
          // The first one counts (the reader uses it); a damaged one is rewritten at the end, repaired.
          if (this.header) return;
          this.header = m.metadata;
          if (!headerNeedsRepair(m.metadata)) this.headerWritten = true;
          else return;
        }
        this.metadataIndexes.push({ offset: BigInt(this.out.position()), length: BigInt(item.length), name: m.name });
        return this.out.write(bytes);
      }
      case Opcode.Attachment:
        this.attachmentCount++;
        return this.out.write(bytes);
      case Opcode.MessageIndex:
      case Opcode.ChunkIndex:
      case Opcode.AttachmentIndex:
      case Opcode.Statistics:
      case Opcode.MetadataIndex:
      case Opcode.SummaryOffset:
        // Index and summary records are rebuilt from the data; a stray one in the data section is not data.
        return;
      default:
        // Private or future opcodes: kept in place.
        return this.out.write(bytes);
    }
  }

  /** Registers a schema or channel: `keep` it, `drop` a conflicting duplicate, or write re-encoded bytes instead. */
  private define(record: Schema | Channel): 'keep' | 'drop' | Uint8Array {
    if (record.type === 'Schema') {
      const known = this.schemas.get(record.id);
      if (known) return sameSchema(known, record) ? 'keep' : 'drop';
      this.schemas.set(record.id, { ...record, data: record.data.slice() });
      return 'keep';
    }
    const known = this.channels.get(record.id);
    if (known) {
      if (sameChannel(known, record)) return 'keep';
      // A repeat of a channel kept without its lost schema: repeat the kept form.
      return known.schemaId === 0 && sameChannel(known, { ...record, schemaId: 0 }) ? encodeChannel(this.scratch, known) : 'drop';
    }
    if (record.schemaId !== 0 && !this.schemas.has(record.schemaId)) {
      // Its schema was lost with a damaged chunk: keep the channel (and its messages) without a schema.
      const orphan = { ...record, schemaId: 0 };
      this.channels.set(record.id, orphan);
      return encodeChannel(this.scratch, orphan);
    }
    this.channels.set(record.id, record);
    return 'keep';
  }

  private chunk(item: Extract<WalkItem, { kind: 'chunk' }>): void {
    const { chunk, records, inner } = item;
    const rb = records.bytes;
    const rv = records.view;
    // Decide record by record; `rebuilt` collects the records when anything had to change.
    let rebuilt: ByteWriter | undefined;
    const entries = new Map<number, Array<[bigint, number]>>();
    const pendingTallies: Array<[number, bigint, number]> = [];
    let min = 0n;
    let max = 0n;
    let messages = 0;
    const startRebuild = (upTo: InnerRecord) => {
      rebuilt = new ByteWriter(records.end);
      rebuilt.raw(rb.subarray(records.start, upTo.at));
    };
    for (const r of inner) {
      const raw = rb.subarray(r.at, r.at + r.length);
      if (r.opcode === Opcode.Message) {
        const channelId = rv.getUint16(r.at + 9, true);
        if (!this.channels.has(channelId)) {
          if (!rebuilt) startRebuild(r);
          this.dropMessage(r.length);
          continue;
        }
        const time = rv.getBigUint64(r.at + 15, true);
        const offset = rebuilt ? rebuilt.length : r.at - records.start;
        let list = entries.get(channelId);
        if (!list) entries.set(channelId, (list = []));
        list.push([time, offset]);
        if (messages === 0 || time < min) min = time;
        if (messages === 0 || time > max) max = time;
        messages++;
        pendingTallies.push([channelId, time, r.length - 31]);
        rebuilt?.raw(raw);
        continue;
      }
      if (r.opcode === Opcode.Schema || r.opcode === Opcode.Channel) {
        const kept = this.define(parseRecord(rb, rv, r.at, r.at + r.length).record as Schema | Channel);
        if (kept === 'keep') rebuilt?.raw(raw);
        else {
          if (!rebuilt) startRebuild(r);
          if (kept !== 'drop') rebuilt!.raw(kept);
        }
        continue;
      }
      rebuilt?.raw(raw);
    }
    for (const [channelId, time, size] of pendingTallies) this.countMessage(channelId, time, size);
    if (messages === 0) {
      // Nothing left to index: keep the schema and channel records outside a chunk.
      this.out.write(rebuilt ? rebuilt.view8() : rb.subarray(records.start, records.end));
      return;
    }
    const timesAgree = chunk.messageStartTime === min && chunk.messageEndTime === max;
    const offset = this.out.position();
    let length: number;
    let compression = chunk.compression;
    let storedSize = chunk.recordsLength;
    let uncompressedSize = Number(chunk.uncompressedSize);
    if (!rebuilt && timesAgree) {
      this.out.write(item.buf.subarray(item.at, item.at + item.length));
      length = item.length;
    } else {
      // Re-encode: new records (recompressed when the codec can write), or only the header with corrected times.
      let stored: Uint8Array;
      let crc = chunk.uncompressedCrc;
      if (rebuilt) {
        const plain = rebuilt.view8();
        uncompressedSize = plain.length;
        const codec = compression ? this.codecs[compression] : undefined;
        stored = codec?.compress ? codec.compress(plain, 1) : plain;
        if (!codec?.compress) compression = '';
        if (crc !== 0) crc = crc32(plain);
      } else stored = item.buf.subarray(chunk.recordsOffset, chunk.recordsOffset + chunk.recordsLength);
      storedSize = stored.length;
      const w = this.scratch;
      w.reset();
      encodeChunk(w, { ...chunk, messageStartTime: min, messageEndTime: max, uncompressedCrc: crc, compression }, uncompressedSize, stored);
      this.out.write(w.view8());
      length = w.length;
    }
    if (compression) this.compressions.add(compression);
    // Fresh message indexes right after the chunk, sorted by channel id as writers do.
    const indexOffsets = new Map<number, bigint>();
    const indexStart = this.out.position();
    const w = this.scratch;
    w.reset();
    for (const id of [...entries.keys()].sort((a, b) => a - b)) {
      indexOffsets.set(id, BigInt(indexStart + w.length));
      const list = entries.get(id)!;
      const at = w.beginRecord(Opcode.MessageIndex);
      w.u16(id);
      w.u32(list.length * 16);
      for (const [time, at2] of list) {
        w.u64big(time);
        w.u64(at2);
      }
      w.endRecord(at);
    }
    this.out.write(w.view8());
    this.chunkIndexes.push({
      messageStartTime: min,
      messageEndTime: max,
      chunkStartOffset: BigInt(offset),
      chunkLength: BigInt(length),
      messageIndexOffsets: indexOffsets,
      messageIndexLength: BigInt(w.length),
      compression,
      compressedSize: BigInt(storedSize),
      uncompressedSize: BigInt(uncompressedSize),
    });
  }

  private countMessage(channelId: number, time: bigint, payload: number): void {
    if (this.messageCount === 0 || time < this.startTime) this.startTime = time;
    if (this.messageCount === 0 || time > this.endTime) this.endTime = time;
    this.messageCount++;
    let tally = this.tallies.get(channelId);
    if (!tally) this.tallies.set(channelId, (tally = new ChannelTally()));
    tally.add(time, payload);
  }

  private dropMessage(length: number): void {
    this.report.droppedMessages++;
    this.report.droppedBytes += length;
  }

  /** The VLinkHeader if it was lost, and a `VLinkChannel_<id>` per channel, corrected from the counts. */
  private writeVlinkMetadata(): void {
    if (!this.headerWritten) {
      this.report.rebuiltHeader = true;
      const firstMs = this.messageCount > 0 ? Number(this.startTime / 1_000_000n) : 0;
      this.writeMetadata(HEADER_METADATA, repairedHeader(this.header, this.compressions.has('zstd') ? 'zstd' : 'None', firstMs));
    }
    for (const id of [...this.channels.keys()].sort((a, b) => a - b)) {
      const channel = this.channels.get(id)!;
      const existing = this.channelMetadata.get(id)?.metadata;
      const entries = channelMetadataEntries(channel, this.schemas.get(channel.schemaId), this.tallies.get(id), existing);
      const same = existing !== undefined && sameEntries(existing, entries);
      if (!same) this.report.rebuiltChannelMetadata++;
      this.writeMetadata(`${CHANNEL_METADATA_PREFIX}${id}`, same ? [...existing!] : entries);
    }
  }

  private writeMetadata(name: string, entries: Array<[string, string]>): void {
    const w = this.scratch;
    w.reset();
    const length = writeMetadata(w, { name, metadata: new Map(entries) });
    this.metadataIndexes.push({ offset: BigInt(this.out.position()), length: BigInt(length), name });
    this.out.write(w.view8());
  }
}

/** A whole chunk record with bigint times. */
function encodeChunk(w: ByteWriter, chunk: Chunk, uncompressedSize: number, stored: Uint8Array): void {
  const at = w.beginRecord(Opcode.Chunk);
  w.u64big(chunk.messageStartTime);
  w.u64big(chunk.messageEndTime);
  w.u64(uncompressedSize);
  w.u32(chunk.uncompressedCrc);
  w.string(chunk.compression);
  w.u64(stored.length);
  w.raw(stored);
  w.endRecord(at);
}

/** Whether an existing VLinkChannel record says exactly what the rebuilt one would (same keys, order and values). */
function sameEntries(existing: ReadonlyMap<string, string>, entries: Array<[string, string]>): boolean {
  if (existing.size !== entries.length) return false;
  let i = 0;
  for (const [key, value] of existing) {
    const [k, v] = entries[i++]!;
    if (key !== k || value !== v) return false;
  }
  return true;
}

function encodeChannel(w: ByteWriter, channel: Channel): Uint8Array {
  w.reset();
  writeChannel(w, channel);
  return w.view8().slice();
}
