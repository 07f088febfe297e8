import type { ProgressCallback } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import type { Writable } from '../io/writable.js';
import { ByteWriter } from '../mcap/byte-writer.js';
import { MAGIC, Opcode } from '../mcap/constants.js';
import { writeChannel, writeHeader, writeMetadata, writeSchema } from '../mcap/record-encoder.js';
import type { Channel, ChunkIndex, Header, Metadata, MetadataIndex, Schema } from '../mcap/records.js';
import { readHeader, readSummary, type Summary } from '../mcap/summary.js';
import { writeFileTail } from '../mcap/summary-writer.js';
import { CHANNEL_METADATA_PREFIX, HEADER_METADATA, isHeaderMetadata, VLINK_PROFILE } from '../vcap/vcap-format.js';
import { BufferedSink } from './buffered-sink.js';
import type { SalvagedChunk } from './chunk-salvage.js';
import { walkDataSection, type WalkItem } from './data-walk.js';
import { DuplicateChunks } from '../mcap/duplicate-chunks.js';
import { KeptDefinitions } from './kept-definitions.js';
import { rebuildChunk, type ChunkRebuildContext } from './rebuild-chunk.js';
import { channelRepairs, emptyFixReport, type VcapFixReport } from './fix-report.js';
import { channelMetadataEntries, ChannelTally, sameEntries } from './vlink-channel-meta.js';
import { headerFallback, type HeaderSources } from './sidecar-facts.js';
import { isVlinkFile } from './vlink-evidence.js';
import { headerNeedsRepair, repairedHeader } from './vlink-header.js';

/**
 * Rewrites a `.vcap` (or any MCAP file) from `source` into `sink` as a complete file: the header, every usable record
 * of the data section in order (intact chunks byte for byte), fresh message indexes, `VLinkChannel_*` records
 * reconstructed from the channels and counts, then DataEnd, a summary computed from what was kept, and the footer.
 * Damaged chunks and garbage are left out and counted; the walk resynchronises after them (see `walkDataSection`).
 * Throws `CORRUPT_FILE` when not even the MCAP header is readable.
 */
export function rebuildVcap(
  source: Readable,
  sink: Writable,
  codecs: Codecs,
  file?: string,
  onProgress?: ProgressCallback,
  /** Where the VLinkHeader's values come from should the file have lost them or garbled them (see HeaderSources). */
  outside: HeaderSources = {},
): VcapFixReport {
  const { header, headerEnd } = readHeader(source, file);
  let expected: Map<number, number> | undefined;
  let summary: Summary | undefined;
  try {
    summary = readSummary(source, headerEnd, file);
    const st = summary.statistics;
    if (st) expected = new Map([...st.channelMessageCounts].map(([id, n]) => [id, Number(n)]));
  } catch {
    // no usable summary: the VLinkChannel_* counts (if any survived) say what was there
  }
  const vlink = isVlinkFile(header, summary, source, headerEnd);
  return new Rebuilder(source, new BufferedSink(sink), codecs, vlink, file, expected, summary, outside).run(
    header,
    headerEnd,
    onProgress,
  );
}

const MAX_PROBLEMS = 100;

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
  /** Messages counted as lost, per channel. */
  private readonly lost = new Map<number, number>();
  /** The last item was a chunk dropped without its messages counted: the message indexes after it count them. */
  private countIndexesAsLost = false;
  readonly report: VcapFixReport = emptyFixReport();
  private readonly duplicates = new DuplicateChunks();

  constructor(
    private readonly source: Readable,
    readonly out: BufferedSink,
    readonly codecs: Codecs,
    private readonly vlink: boolean,
    private readonly file: string | undefined,
    /** Messages per channel by the file's own statistics, when its summary survived. */
    private readonly expected: Map<number, number> | undefined,
    /** The file's summary, when it survived: it repeats the schema and channel records a damaged chunk took along. */
    private readonly summary: Summary | undefined,
    private readonly outside: HeaderSources,
  ) {}

  recoverChannel(channelId: number): boolean {
    const channel = this.summary?.channels.get(channelId);
    if (!channel) return false;
    if (channel.schemaId !== 0 && !this.schemas.has(channel.schemaId)) {
      const schema = this.summary!.schemas.get(channel.schemaId);
      if (schema && this.definitions.define(schema) === 'keep') this.writeDefinition(schema);
    }
    const verdict = this.definitions.define(channel);
    if (verdict === 'drop') return false;
    if (verdict === 'keep') this.writeDefinition(channel);
    else this.out.write(verdict);
    return true;
  }

  private writeDefinition(record: Schema | Channel): void {
    const w = this.scratch;
    w.reset();
    if (record.type === 'Schema') writeSchema(w, record);
    else writeChannel(w, record);
    this.out.write(w.view8().slice());
  }

  private get schemas(): Map<number, Schema> {
    return this.definitions.schemas;
  }

  private get channels(): Map<number, Channel> {
    return this.definitions.channels;
  }

  run(header: Header, headerEnd: number, onProgress?: ProgressCallback): VcapFixReport {
    const total = this.source.size();
    this.out.write(MAGIC);
    if (this.vlink && header.profile !== VLINK_PROFILE) {
      // The header's own bytes are damaged: written again with VLink's profile (readers pick the mapping by it).
      this.problem(
        `the MCAP header's profile was damaged (${JSON.stringify(header.profile)}): written again as "vlink"`,
      );
      const w = this.scratch;
      w.reset();
      writeHeader(w, { profile: VLINK_PROFILE, library: header.library });
      this.out.write(w.view8().slice());
    } else this.out.write(this.source.read(MAGIC.length, headerEnd - MAGIC.length).slice());
    walkDataSection(
      this.source,
      headerEnd,
      total,
      {
        codecs: this.codecs,
        validateCrcs: true,
        resync: true,
        salvage: true,
        ...(this.file === undefined ? {} : { file: this.file }),
      },
      (item) => {
        this.visit(item);
        // Bytes of the source walked, once per chunk (the unit of work worth a redraw).
        if (onProgress && item.kind === 'chunk')
          onProgress({ done: Math.min(item.offset + item.length, total), total, unit: 'bytes' });
      },
    );
    onProgress?.({ done: total, total, unit: 'bytes' });
    if (this.vlink) this.writeVlinkMetadata();
    this.writeTail();
    this.out.flush();
    this.report.kept = this.messageCount;
    this.report.channels = channelRepairs(this.channels, this.tallies, this.lost, this.expected, this.channelMetadata);
    this.report.lostMessages = this.report.channels.reduce((n, c) => n + c.lostMessages, 0);
    return this.report;
  }

  private problem(text: string): void {
    if (this.report.problems.length < MAX_PROBLEMS) this.report.problems.push(text);
  }

  private loseMessages(channelId: number, n: number): void {
    this.lost.set(channelId, (this.lost.get(channelId) ?? 0) + n);
  }

  private visit(item: WalkItem): void {
    if (item.kind !== 'record' || item.opcode !== Opcode.MessageIndex) this.countIndexesAsLost = false;
    switch (item.kind) {
      case 'damaged': {
        this.report.droppedBytes += item.length;
        if (item.chunk) this.report.droppedChunks++;
        let lost = 0;
        for (const [id, n] of item.lostMessages ?? []) {
          this.loseMessages(id, n);
          lost += n;
        }
        this.countIndexesAsLost = item.chunk && item.lostMessages === undefined;
        this.problem(
          `${item.chunk ? 'chunk' : 'bytes'} at offset ${item.offset} (${item.length} bytes) dropped${lost > 0 ? ` with ${lost} messages` : ''}: ${item.reason.message}`,
        );
        return;
      }
      case 'salvaged': {
        const { salvaged } = item;
        this.report.salvagedChunks++;
        this.report.droppedBytes += salvaged.lostBytes;
        if (salvaged.cutMessageChannel !== undefined) this.loseMessages(salvaged.cutMessageChannel, 1);
        const before = this.messageCount;
        const index = rebuildChunk(
          { kind: 'chunk', offset: item.offset, length: item.length, ...salvaged, ...salvagedBytes(salvaged) },
          this,
          true,
        );
        if (index) {
          if (index.compression) this.compressions.add(index.compression);
          this.chunkIndexes.push(index);
        }
        this.problem(
          `chunk at offset ${item.offset}: ${this.messageCount - before} complete messages salvaged, ${salvaged.lostBytes} bytes lost (${item.reason.message})`,
        );
        return;
      }
      case 'end':
        return;
      case 'chunk': {
        const first = this.duplicates.copyOf(this.source, item);
        if (first !== undefined) {
          this.report.droppedBytes += item.length;
          this.problem(
            `chunk at offset ${item.offset} (${item.length} bytes) dropped: a copy of the chunk at offset ${first}`,
          );
          return;
        }
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
        if (this.vlink && this.chunkIndexes.length > 0) {
          // VLink's writer puts every message in a chunk once it chunks: a loose one after a chunk is damage (a
          // message index whose opcode lost a bit reads as a message), not a frame (as data-scan.ts reads it).
          this.report.droppedBytes += item.length;
          this.problem(
            `bytes at offset ${item.offset} (${item.length} bytes) dropped: a loose message record among chunks`,
          );
          return;
        }
        if (!this.channels.has(channelId) && !this.recoverChannel(channelId)) {
          this.dropMessage(item.length, channelId);
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
        if (this.vlink && !this.header && isHeaderMetadata(m.name, m.metadata)) {
          // The first one counts (the reader uses it); a damaged one, or one under a damaged name, is rewritten at
          // the end, repaired.
          this.header = m.metadata;
          if (m.name === HEADER_METADATA && !headerNeedsRepair(m.metadata)) this.headerWritten = true;
          else return;
        } else if (m.name === HEADER_METADATA && this.vlink) return;
        this.metadataIndexes.push({ offset: BigInt(this.out.position()), length: BigInt(item.length), name: m.name });
        this.out.write(bytes);
        return;
      }
      case Opcode.Attachment:
        this.attachmentCount++;
        this.out.write(bytes);
        return;
      case Opcode.MessageIndex:
        // The index of a chunk that was dropped still says how many of its channel's messages went with it.
        if (this.countIndexesAsLost && parsed?.type === 'MessageIndex')
          this.loseMessages(parsed.channelId, parsed.records.length);
        return;
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

  dropMessage(length: number, channelId?: number): void {
    this.report.droppedMessages++;
    this.report.droppedBytes += length;
    if (channelId !== undefined) this.loseMessages(channelId, 1);
  }

  /** The VLinkHeader if it was lost, and a `VLinkChannel_<id>` per channel, corrected from the counts. */
  private writeVlinkMetadata(): void {
    if (!this.headerWritten) {
      this.report.rebuiltHeader = true;
      const kept = this.messageCount > 0 ? { firstNs: this.startTime, lastNs: this.endTime } : undefined;
      const fallback = headerFallback(this.outside, this.summary?.statistics, kept);
      const { entries, fromFallback, damaged } = repairedHeader(
        this.header,
        this.compressions.has('zstd') ? 'zstd' : 'None',
        fallback,
      );
      // Every frame time counts from the start: say where a start the file lost was taken from, or that a damaged
      // header's values were kept with nothing to confirm them.
      const from = `${fromFallback.join(', ')} taken from ${fallback.from}`;
      if (damaged)
        this.problem(
          `VLinkHeader damaged (its header_crc32 does not match): ${fromFallback.length > 0 ? from : 'its values kept, nothing outside the file confirms them'}`,
        );
      else if (fromFallback.length > 0) this.problem(`VLinkHeader lost or unusable: ${from}`);
      this.writeMetadata(HEADER_METADATA, entries);
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
    this.scratch.reset();
    const length = writeMetadata(this.scratch, { name, metadata: new Map(entries) });
    this.metadataIndexes.push({ offset: BigInt(this.out.position()), length: BigInt(length), name });
    this.out.write(this.scratch.view8());
  }

  /** DataEnd, the summary computed from what was kept, and the footer. */
  private writeTail(): void {
    const tail = new ByteWriter(64 * 1024);
    const ids = [...this.channels.keys()].sort((a, b) => a - b);
    writeFileTail(tail, this.out.position(), {
      dataSectionCrc: this.out.crc(),
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

/** The buffer fields `rebuildChunk` takes from a walk item, for a salvaged chunk (re-encoded, so never copied from). */
function salvagedBytes(s: SalvagedChunk): { buf: Uint8Array; view: DataView; at: number } {
  return { buf: s.records.bytes, view: s.records.view, at: 0 };
}
