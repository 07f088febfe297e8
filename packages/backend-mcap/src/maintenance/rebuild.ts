import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import type { Writable } from '../io/writable.js';
import { ByteWriter } from '../mcap/byte-writer.js';
import { MAGIC, Opcode } from '../mcap/constants.js';
import { writeMetadata } from '../mcap/record-encoder.js';
import type { Channel, ChunkIndex, Metadata, MetadataIndex, Schema } from '../mcap/records.js';
import { readHeader } from '../mcap/summary.js';
import { writeFileTail } from '../mcap/summary-writer.js';
import { CHANNEL_METADATA_PREFIX, HEADER_METADATA, VLINK_PROFILE } from '../vcap/vcap-format.js';
import { BufferedSink } from './buffered-sink.js';
import { walkDataSection, type WalkItem } from './data-walk.js';
import { KeptDefinitions } from './kept-definitions.js';
import { rebuildChunk, type ChunkRebuildContext } from './rebuild-chunk.js';
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

/**
 * Rewrites a `.vcap` (or any MCAP file) from `source` into `sink` as a complete file: the header, every usable record
 * of the data section in order (intact chunks byte for byte), fresh message indexes, `VLinkChannel_*` records
 * reconstructed from the channels and counts, then DataEnd, a summary computed from what was kept, and the footer.
 * Damaged chunks and garbage are left out and counted; the walk resynchronises after them (see `walkDataSection`).
 * Throws `CORRUPT_FILE` when not even the MCAP header is readable.
 */
export function rebuildVcap(source: Readable, sink: Writable, codecs: Codecs, file?: string): VcapFixReport {
  const { header, headerEnd } = readHeader(source, file);
  return new Rebuilder(source, new BufferedSink(sink), codecs, header.profile === VLINK_PROFILE, file).run(headerEnd);
}

/**
 * One rebuild: walks the data section, writes loose records here and chunks through `rebuildChunk` (it is their
 * context), and keeps what the summary and the VLink metadata written at the end are computed from.
 */
class Rebuilder implements ChunkRebuildContext {
  readonly scratch = new ByteWriter(64 * 1024);
  readonly definitions = new KeptDefinitions(this.scratch);
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
  readonly report: VcapFixReport = {
    kept: 0,
    droppedChunks: 0,
    droppedBytes: 0,
    droppedMessages: 0,
    rebuiltChannelMetadata: 0,
    rebuiltHeader: false,
    rewritten: true,
  };

  constructor(
    private readonly source: Readable,
    readonly out: BufferedSink,
    readonly codecs: Codecs,
    private readonly vlink: boolean,
    private readonly file: string | undefined,
  ) {}

  private get schemas(): Map<number, Schema> {
    return this.definitions.schemas;
  }

  private get channels(): Map<number, Channel> {
    return this.definitions.channels;
  }

  run(headerEnd: number): VcapFixReport {
    this.out.write(MAGIC);
    this.out.write(this.source.read(MAGIC.length, headerEnd - MAGIC.length).slice());
    walkDataSection(
      this.source,
      headerEnd,
      this.source.size(),
      {
        codecs: this.codecs,
        validateCrcs: true,
        resync: true,
        ...(this.file === undefined ? {} : { file: this.file }),
      },
      (item) => this.visit(item),
    );
    if (this.vlink) this.writeVlinkMetadata();
    this.writeTail();
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
      case 'chunk': {
        const index = rebuildChunk(item, this);
        if (!index) return;
        if (index.compression) this.compressions.add(index.compression);
        this.chunkIndexes.push(index);
        return;
      }
      case 'record':
        this.record(item);
        return;
    }
  }

  /** A record outside a chunk. */
  private record(item: Extract<WalkItem, { kind: 'record' }>): void {
    const bytes = item.buf.subarray(item.at, item.at + item.length);
    const parsed = item.parsed;
    switch (item.opcode) {
      case Opcode.Message: {
        const channelId = item.view.getUint16(item.at + 9, true);
        if (!this.channels.has(channelId)) {
          this.dropMessage(item.length);
          return;
        }
        this.countMessage(channelId, item.view.getBigUint64(item.at + 15, true), item.length - 31);
        this.out.write(bytes);
        return;
      }
      case Opcode.Schema:
      case Opcode.Channel: {
        const kept = this.definitions.define(parsed as Schema | Channel);
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
        this.out.write(bytes);
        return;
      }
      case Opcode.Attachment:
        this.attachmentCount++;
        this.out.write(bytes);
        return;
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
        this.out.write(bytes);
        return;
    }
  }

  countMessage(channelId: number, time: bigint, payload: number): void {
    if (this.messageCount === 0 || time < this.startTime) this.startTime = time;
    if (this.messageCount === 0 || time > this.endTime) this.endTime = time;
    this.messageCount++;
    let tally = this.tallies.get(channelId);
    if (!tally) this.tallies.set(channelId, (tally = new ChannelTally()));
    tally.add(time, payload);
  }

  dropMessage(length: number): void {
    this.report.droppedMessages++;
    this.report.droppedBytes += length;
  }

  /** The VLinkHeader if it was lost, and a `VLinkChannel_<id>` per channel, corrected from the counts. */
  private writeVlinkMetadata(): void {
    if (!this.headerWritten) {
      this.report.rebuiltHeader = true;
      const firstMs = this.messageCount > 0 ? Number(this.startTime / 1_000_000n) : 0;
      this.writeMetadata(
        HEADER_METADATA,
        repairedHeader(this.header, this.compressions.has('zstd') ? 'zstd' : 'None', firstMs),
      );
    }
    for (const id of [...this.channels.keys()].sort((a, b) => a - b)) {
      const channel = this.channels.get(id)!;
      const existing = this.channelMetadata.get(id)?.metadata;
      const entries = channelMetadataEntries(
        channel,
        this.schemas.get(channel.schemaId),
        this.tallies.get(id),
        existing,
      );
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

  /** DataEnd, the summary computed from what was kept, and the footer. */
  private writeTail(): void {
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
  }
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
