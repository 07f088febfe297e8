import type { BagError } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import type { Block } from './blocks.js';
import { ChunkLoader } from './chunk-loader.js';
import { MAGIC, Opcode } from './constants.js';
import { asBagError, corrupt } from './corruption.js';
import { scanDataSection, type MetadataLocation } from './data-scan.js';
import { LogTimeCursor } from './log-time-cursor.js';
import { MessageCursor, type MessageStream } from './message-cursor.js';
import { MessageFilter, type MessageQuery } from './message-filter.js';
import { hasMagic, parseRecord } from './record-parser.js';
import type { Channel, ChunkIndex, Footer, Header, Message, Metadata, Schema, Statistics } from './records.js';
import { readHeader, readSummary, type Summary } from './summary.js';

export interface McapReaderOptions {
  codecs: Codecs;
  /**
   * Whether a file whose footer or summary is missing or damaged may be read by a linear scan (tolerating a
   * truncated end). Called with the file's header; default: always.
   */
  allowScan?: (header: Header) => boolean;
  /** Whether the file's writer puts every message in a chunk once it chunks (see `ScanOptions`). */
  chunksHoldEveryMessage?: (header: Header) => boolean;
  /** Check non-zero chunk CRCs (default true). */
  validateCrcs?: boolean;
  /**
   * Read the data section by a tolerant scan even though the summary is usable (mode `recovered`): what a salvage
   * does when a chunk the summary points at does not read, since the scan skips such a chunk and counts it
   * (`damagedChunks`) where a read by the summary stops at it.
   */
  scanDespiteSummary?: boolean;
  /** Path for error messages. */
  file?: string;
}

/** How the reader found its way through the file. */
export type ReadMode =
  /** Summary with chunk indexes (or a data section without chunks): nothing scanned at open. */
  | 'indexed'
  /** The summary was intact but incomplete (no channels, no chunk indexes, no statistics): data section scanned. */
  | 'scanned'
  /** Footer or summary missing or damaged (or `scanDespiteSummary`): recovered by a tolerant linear scan. */
  | 'recovered';

/**
 * The record-level MCAP reader the backend is built on: header, summary records, metadata and messages of one file,
 * with a linear scan when the summary cannot be used (see `ReadMode`). Messages come in file order unless the query
 * asks for log-time order.
 */
export class McapFileReader {
  readonly header: Header;
  readonly footer: Footer | undefined;
  readonly mode: ReadMode;
  /** Why the summary could not be used (mode `recovered`). */
  readonly summaryError: BagError | undefined;
  /** The file ends with MCAP's closing magic: its writer finished it (a crashed one leaves no footer). */
  readonly finished: boolean;
  /**
   * Why a finished file's footer or summary cannot be read: damage, unlike a summary the writer did not write (a
   * summary start of 0, which the format allows) or a file without its footer (unfinished).
   */
  readonly summaryDamage: BagError | undefined;
  /** Set when a recovery scan stopped at damaged or missing bytes: where, and why. */
  readonly stoppedAt: number | undefined;
  readonly stopReason: BagError | undefined;
  readonly damagedChunks: number;
  /** Loose message records a recovery scan skipped as damage (see `ScanOptions.chunksHoldEveryMessage`). */
  readonly strayMessages: number;
  /** Chunks a recovery scan skipped as byte-for-byte copies of earlier ones (damage; see `DuplicateChunks`). */
  readonly copiedChunks: number;
  readonly schemas: ReadonlyMap<number, Schema>;
  readonly channels: ReadonlyMap<number, Channel>;
  /** The file's own Statistics record, if it has one. */
  readonly fileStatistics: Statistics | undefined;
  /** The file's statistics, or statistics computed by the scan when it has none. */
  readonly statistics: Statistics;
  /** Chunk indexes of the summary (empty when there is none). */
  readonly chunkIndexes: readonly ChunkIndex[];
  readonly blocks: readonly Block[];
  readonly metadataLocations: readonly MetadataLocation[];
  readonly headerEnd: number;

  private constructor(
    private readonly readable: Readable,
    private readonly options: McapReaderOptions,
  ) {
    const file = options.file;
    const validateCrcs = options.validateCrcs ?? true;
    const { header, headerEnd } = readHeader(readable, file);
    this.header = header;
    this.headerEnd = headerEnd;

    const size = readable.size();
    this.finished =
      size >= 2 * MAGIC.length && hasMagic(readable.read(size - MAGIC.length, MAGIC.length).slice(), 0, MAGIC);
    let summary: Summary | undefined;
    let summaryError: BagError | undefined;
    try {
      summary = readSummary(readable, headerEnd, file);
    } catch (error) {
      summaryError = asBagError(error, file, 0, 'bad summary');
    }
    this.summaryDamage = this.finished ? summaryError : undefined;
    if (summary && summary.footer.summaryStart === 0n) {
      summaryError = corrupt('file has no summary section', file, summary.footerOffset);
      summary = undefined;
    }
    this.summaryError = summaryError;
    this.footer = summary?.footer;

    const scanDespiteSummary = options.scanDespiteSummary === true;
    if (summary && isSufficient(summary) && !scanDespiteSummary) {
      this.mode = 'indexed';
      this.schemas = summary.schemas;
      this.channels = summary.channels;
      this.fileStatistics = this.statistics = summary.statistics!;
      this.chunkIndexes = summary.chunkIndexes;
      this.metadataLocations = summary.metadataIndexes.map((m) => ({
        name: m.name,
        offset: Number(m.offset),
        length: Number(m.length),
      }));
      this.blocks =
        summary.chunkIndexes.length > 0
          ? blocksFromIndexes(summary.chunkIndexes)
          : loneSpan(headerEnd, summary.dataEnd, summary.statistics!);
      this.damagedChunks = 0;
      this.strayMessages = 0;
      this.copiedChunks = 0;
      this.stoppedAt = undefined;
      this.stopReason = undefined;
      return;
    }
    if (!summary && options.allowScan && !options.allowScan(header)) throw summaryError!;
    const scan = scanDataSection(readable, headerEnd, summary ? summary.dataEnd : readable.size(), {
      codecs: options.codecs,
      validateCrcs,
      tolerant: !summary || scanDespiteSummary,
      chunksHoldEveryMessage: options.chunksHoldEveryMessage?.(header) === true,
      ...(file === undefined ? {} : { file }),
    });
    this.mode = summary && !scanDespiteSummary ? 'scanned' : 'recovered';
    this.schemas = mergeMaps(summary?.schemas, scan.schemas);
    this.channels = mergeMaps(summary?.channels, scan.channels);
    this.fileStatistics = summary?.statistics;
    // A scan despite the summary counts what it read: the summary's statistics also count the chunks it skipped.
    this.statistics = (scanDespiteSummary ? undefined : summary?.statistics) ?? scan.statistics;
    this.chunkIndexes = summary?.chunkIndexes ?? [];
    this.blocks = scan.blocks;
    this.metadataLocations = scan.metadata;
    this.damagedChunks = scan.damagedChunks;
    this.strayMessages = scan.strayMessages;
    this.copiedChunks = scan.copiedChunks;
    this.stoppedAt = scan.stoppedAt;
    this.stopReason = scan.stopReason;
  }

  /** Opens a readable: header, then summary or scan. Throws `CORRUPT_FILE` for what cannot be read. */
  static open(readable: Readable, options: McapReaderOptions): McapFileReader {
    return new McapFileReader(readable, options);
  }

  /** Reads one metadata record by its location. */
  readMetadata(location: MetadataLocation): Metadata {
    const file = this.options.file;
    if (location.offset < 0 || location.offset + location.length > this.readable.size()) {
      throw corrupt('metadata record lies outside the file', file, location.offset);
    }
    const bytes = this.readable.read(location.offset, location.length).slice();
    try {
      if (bytes[0] !== Opcode.Metadata)
        throw corrupt('metadata index does not point at a metadata record', file, location.offset);
      const { record } = parseRecord(bytes, new DataView(bytes.buffer), 0, bytes.length);
      return record as Metadata;
    } catch (error) {
      throw asBagError(error, file, location.offset, 'bad metadata record');
    }
  }

  /** All metadata records named `name` (all of them without a name), in file order. */
  metadata(name?: string): Metadata[] {
    return this.metadataLocations
      .filter((m) => name === undefined || m.name === name)
      .sort((a, b) => a.offset - b.offset)
      .map((m) => this.readMetadata(m));
  }

  /**
   * The fast path: a cursor over the messages matching `query`, in file order or, with `order: 'log-time'`, by log
   * time. Each cursor has its own buffers, so cursors may be interleaved; a message's `data` stays valid until that
   * cursor's next step.
   */
  cursor(query: MessageQuery = {}): MessageStream {
    const { codecs, file } = this.options;
    const validateCrcs = this.options.validateCrcs ?? true;
    const newLoader = () => new ChunkLoader(this.readable, codecs, validateCrcs, file);
    const filter = new MessageFilter(query);
    if (query.order === 'log-time') return new LogTimeCursor(this.readable, newLoader, this.blocks, filter, file);
    return new MessageCursor(this.readable, newLoader(), this.blocks, filter, file);
  }

  /** Messages as records (bigint times, `data` a view valid until the next step), in the query's order. */
  *messages(query: MessageQuery = {}): IterableIterator<Message> {
    const c = this.cursor(query);
    while (c.next()) {
      yield {
        type: 'Message',
        channelId: c.channelId,
        sequence: c.sequence,
        logTime: c.logTime,
        publishTime: c.publishTime,
        data: c.data,
      };
    }
  }

  close(): void {
    this.readable.close();
  }
}

/** Can the summary alone serve reads: statistics, every channel and schema, and an index for every chunk? */
function isSufficient(s: Summary): boolean {
  const st = s.statistics;
  if (!st) return false;
  if (s.channels.size < st.channelCount) return false;
  for (const id of st.channelMessageCounts.keys()) if (!s.channels.has(id)) return false;
  for (const c of s.channels.values()) if (c.schemaId !== 0 && !s.schemas.has(c.schemaId)) return false;
  if (s.chunkIndexes.length < st.chunkCount) return false;
  if (st.chunkCount > 0 && s.chunkIndexes.length === 0) return false;
  if (s.metadataIndexes.length < st.metadataCount) return false;
  return true;
}

function blocksFromIndexes(indexes: readonly ChunkIndex[]): Block[] {
  return indexes
    .map(
      (c): Block => ({
        kind: 'chunk',
        offset: Number(c.chunkStartOffset),
        length: Number(c.chunkLength),
        startTime: c.messageStartTime,
        endTime: c.messageEndTime,
        channels: c.messageIndexOffsets.size > 0 ? new Set(c.messageIndexOffsets.keys()) : undefined,
        compression: c.compression,
        indexed: true,
      }),
    )
    .sort((a, b) => a.offset - b.offset);
}

/** An unchunked data section: one span from the header to the summary, timed by the statistics. */
function loneSpan(headerEnd: number, dataEnd: number, st: Statistics): Block[] {
  if (st.messageCount === 0n || dataEnd <= headerEnd) return [];
  return [
    {
      kind: 'span',
      offset: headerEnd,
      length: dataEnd - headerEnd,
      startTime: st.messageStartTime,
      endTime: st.messageEndTime,
      channels: undefined,
    },
  ];
}

function mergeMaps<K, V>(first: ReadonlyMap<K, V> | undefined, second: ReadonlyMap<K, V>): Map<K, V> {
  const out = new Map(first ?? []);
  for (const [k, v] of second) if (!out.has(k)) out.set(k, v);
  return out;
}
