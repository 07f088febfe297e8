import {
  ActionType,
  actionText,
  BagError,
  countsForFrequency,
  schemaTypeLabel,
  SchemaType,
  urlKindOf,
  parseSchemaType,
} from '@vlink/bag-core';
import type { Frame, RecordingContext, ResolvedWriterConfig, SchemaData } from '@vlink/bag-core';
import { zstdLevelFor, type Codecs } from '../codecs.js';
import { openChunkCompressor } from '../compress/open-chunk-compressor.js';
import type { PipelinedCompressor } from '../compress/pipelined-compressor.js';
import type { Writable } from '../io/writable.js';
import { isDecodableSchemaEncoding, messageEncodingFor, wellKnownSchemaEncoding } from '../encodings/well-known.js';
import { McapWriter } from '../mcap/mcap-writer.js';
import { logTimeOutOfRange, MAX_LOG_OFFSET_US, publishTimeNs } from '../mcap/message-times.js';
import {
  CHANNEL_METADATA_PREFIX,
  COUNTERS_METADATA,
  embedsSchema,
  fixed6,
  frequency,
  HEADER_METADATA,
  VCAP_LIBRARY,
  VLINK_PROFILE,
  writesZstdChunks,
} from './vcap-format.js';
import { writtenHeader } from '../maintenance/vlink-header.js';
import {
  channelFamily,
  checkStorableNames,
  keptFamily,
  keptSer,
  schemaKey,
  UrlIdCache,
} from '@vlink/bag-core/internal';
import { ChannelState, UrlChannels, type VcapChannelSummary } from './vcap-channels.js';

export type { VcapChannelSummary } from './vcap-channels.js';

export interface VcapFileWriterOptions {
  writable: Writable;
  codecs: Codecs;
  config: ResolvedWriterConfig;
  context: RecordingContext;
  /** The file, for error messages. */
  file: string;
  /** When this file was opened, ms since the epoch (`VLinkHeader.date`); default: the recording start. */
  openedAt?: number;
  /**
   * Recording-wide index of a (url, action) pair, shared by the segments of a split recording (`.vcapx` manifest
   * `VLinkUrls.index`). Called once per pair and file. Default: this file's channel id − 1.
   */
  indexFor?: (url: string, action: ActionType) => number;
  /** Header `library`; default `VCAP_LIBRARY`. */
  library?: string;
}

const MAX_CHUNK_SIZE = 256 * 1024 * 1024;

/**
 * The channel slot of a frame's action: anything outside the enum is stored as Unknown, never used as an index. Here
 * rather than beside the channels because `write` calls it per frame, and this file is already on that path.
 */
export function channelAction(a: ActionType): ActionType {
  return a >= 0 && a <= 8 && Number.isInteger(a) ? a : ActionType.Unknown;
}

/**
 * Writes one `.vcap` file with VLink's MCAP mapping (format reference §5): profile `vlink`, `VLinkHeader` metadata after the
 * header, one channel per (url, action) with metadata `{action}` and MCAP's well-known encoding names (see
 * `messageEncodingFor`), schema records for protobuf/flatbuffers/CDR and other decodable schema encodings,
 * per-channel 1-based sequences, log time = `timestamp_us*1000 + start_ms*1e6` ns, publish time the same from the
 * frame's `publishTime` where it has one (VLink writes publish = log time; format reference §1.3), chunks of
 * `cacheSize` bytes (zstd when `compress` is Auto or Zstd), and `VLinkChannel_<id>` metadata at close.
 *
 * Split recordings (`.vcapx`) open one of these per segment and pass a shared `indexFor`.
 */
export class VcapFileWriter {
  readonly file: string;
  private readonly mcap: McapWriter;
  private readonly context: RecordingContext;
  private readonly indexFor: ((url: string, action: ActionType) => number) | undefined;
  private readonly writable: Writable;
  private readonly byUrl = new Map<string, UrlChannels>();
  /**
   * `byUrl` by the recording's url id (`BackendWriter.write`), read inline in `write` (`UrlIdCache.byId`): an array
   * read and a compare of the url (the same string frame after frame, so no hashing). An id naming another url (a
   * caller that got the ids wrong) takes the map.
   */
  private readonly byUrlId = new UrlIdCache((url) => this.channelsOf(url));
  /** `byUrlId.byId`, the same array for the writer's life: one field read less per frame (measured, issue #27). */
  private readonly channelsById = this.byUrlId.byId;
  private readonly channels: ChannelState[] = [];
  private readonly schemaIds = new Map<string, number>();
  private readonly losses = new Map<string, number>();
  private readonly compressor: PipelinedCompressor | undefined;
  /** The recording start in ns since the epoch: the base of every time in the file. */
  private readonly startNs: bigint;
  private closed = false;
  private maxTimestamp = -1;
  private minTimestamp = -1;

  constructor(options: VcapFileWriterOptions) {
    const { config, context } = options;
    this.file = options.file;
    this.context = context;
    this.indexFor = options.indexFor;
    this.writable = options.writable;
    // Chunk size = cacheSize (VLink), capped so compressed chunks stay readable (readers refuse > 1 GiB claims).
    const chunkSize = config.cacheSize > 0 ? Math.min(config.cacheSize, MAX_CHUNK_SIZE) : 0;
    const zstd = writesZstdChunks(config);
    this.compressor = openChunkCompressor(chunkSize, config, context, options.file);
    this.startNs = BigInt(Math.trunc(context.startTimestamp)) * 1_000_000n;
    try {
      // enableLimit is not supported for .vcap (VLink only logs a warning): there is nothing to evict in MCAP.
      this.mcap = new McapWriter({
        writable: options.writable,
        codecs: options.codecs,
        profile: VLINK_PROFILE,
        library: options.library ?? VCAP_LIBRARY,
        chunkSize,
        compression: zstd ? 'zstd' : '',
        compressionLevel: zstdLevelFor(config.compressLevel),
        ...(this.compressor ? { compressor: this.compressor } : {}),
        chunkCrc: config.enableChunkCrc,
        timeBase: this.startNs,
        file: options.file,
      });
      this.mcap.start();
      this.mcap.addMetadata(HEADER_METADATA, writtenHeader(context, zstd, options.openedAt ?? context.startTimestamp));
      this.mcap.flush();
    } catch (error) {
      this.compressor?.close();
      throw error;
    }
  }

  /**
   * Stores one frame (`timestamp` in µs since the recording start, ≥ 0). Throws `SCHEMA_CONFLICT` when its ser or
   * family contradicts what its (url, action) channel already holds; the frame is then not stored. `urlId` is the
   * recording's id of the url (`BackendWriter.write`); split recordings pass the same one to every segment.
   */
  write(frame: Frame, urlId: number): void {
    if (this.closed) throw new BagError('CLOSED', 'writer is closed', { file: this.file, url: frame.url });
    // Core hands over resolved timestamps only, but this class is also driven directly (tools, tests); a NaN or
    // negative time would become an MCAP log time no reader can place, so the file keeps its own guard (2 compares);
    // one past what the format stores exactly is refused before anything of the frame is counted (message-times.ts).
    const ts = frame.timestamp;
    if (!(ts >= 0) || !Number.isFinite(ts))
      throw new BagError('INVALID_ARGUMENT', `bad timestamp ${ts}`, { file: this.file, url: frame.url });
    if (ts > MAX_LOG_OFFSET_US) throw logTimeOutOfRange(ts, this.file, frame.url);
    // No default parameter for a caller's action: it cost 5-10 % per frame (hand-measured, Node, 2026-12-02).
    const action = channelAction(frame.actionType);
    let channels = this.channelsById[urlId];
    if (channels === undefined || channels.url !== frame.url) channels = this.byUrlId.get(urlId, frame.url);
    let ch = channels.byAction[action];
    if (ch === undefined) ch = this.openChannel(frame, action, channels);
    else if (frame.serType !== ch.lastSer || frame.schemaType !== ch.lastType) this.reconcile(ch, frame);

    const us = Number.isInteger(ts) ? ts : Math.floor(ts);
    const data = frame.data;
    ch.count++;
    ch.size += data.length;
    if (ch.timed) {
      if (ch.firstUs < 0 || us < ch.firstUs) ch.firstUs = us;
      if (us > ch.lastUs) ch.lastUs = us;
    }
    if (us > this.maxTimestamp) this.maxTimestamp = us;
    if (this.minTimestamp < 0 || us < this.minTimestamp) this.minTimestamp = us;
    // MCAP publish_time: the frame's publish time, else its log time (VLink's mapping). A publish time before the
    // Unix epoch cannot be stored (publish_time is unsigned): it is clamped to it; a far one is written exactly.
    const p = frame.publishTime;
    const publishNs = p === undefined || p === us ? us * 1000 : publishTimeNs(p, us * 1000, this.startNs);
    this.mcap.addMessage(ch.id, ch.count, us * 1000, data, publishNs);
    // New counters (handed over at most once a second) reach the file with the next frame, also in sync mode.
    if (this.countersDirty) {
      this.writeCounters();
      this.mcap.flush();
    }
  }

  /** Embeds a schema now (VLink `push_schema`); schemas a reader can decode with, with a name and data, qualify. */
  writeSchema(schema: SchemaData): void {
    if (this.closed) throw new BagError('CLOSED', 'writer is closed', { file: this.file });
    const family = schema.schemaType !== SchemaType.Unknown ? schema.schemaType : parseSchemaType(schema.encoding);
    const id = this.schemaIdFor(schema, family);
    if (id) this.mcap.writeSchemaNow(id);
  }

  /**
   * The recording's counters by cause: a `VLinkBagCounters` metadata record (vlink-bag, format reference §5.5), one
   * entry per url whose value is the JSON object cause → count, written at the next `tick`/`commit` after a change
   * (a crash keeps the last one: readers take the last record in the file) and at close. Nothing is written while
   * nothing was counted.
   */
  setCounters(table: Record<string, Record<string, number>>): void {
    this.counters = table;
    this.countersDirty = true;
  }
  private counters: Record<string, Record<string, number>> | undefined;
  private countersDirty = false;

  private writeCounters(): void {
    this.countersDirty = false;
    const counters = Object.entries(this.counters ?? {}).filter(([, causes]) => Object.keys(causes).length > 0);
    if (counters.length > 0)
      this.mcap.addMetadata(
        COUNTERS_METADATA,
        counters.map(([url, causes]) => [url, JSON.stringify(causes)]),
      );
  }

  /** Loss ratio of a url, written into its channels' `VLinkChannel_*` at close (> 1 → −1, unknown). */
  setUrlLoss(url: string, loss: number): void {
    this.losses.set(url, loss > 1 ? -1 : loss);
  }

  /** Closes the open chunk and fsyncs. */
  commit(): void {
    if (this.closed) return;
    if (this.countersDirty) this.writeCounters();
    this.mcap.sync();
  }

  /** Flushes a chunk that has been collecting for more than 3 s, so a crash loses at most one chunk or 3 s. */
  tick(now = Date.now()): void {
    if (this.closed) return;
    if (this.countersDirty) {
      this.writeCounters();
      this.mcap.sync();
    } else if (this.mcap.pendingAgeMs(now) > 3000) this.mcap.sync();
  }

  /** Bytes in the file so far, pending ones included (for size-based splits). */
  bytesWritten(): number {
    return this.mcap.position();
  }

  /** The largest timestamp written (µs), −1 before the first frame. */
  lastTimestamp(): number {
    return this.maxTimestamp;
  }

  /** The smallest timestamp written (µs), −1 before the first frame. */
  firstTimestamp(): number {
    return this.minTimestamp;
  }

  /** True once a schema record is in the file (what a reader reports as `hasSchema`: only schemas with data are). */
  hasSchema(): boolean {
    return this.schemaIds.size > 0;
  }

  /** Per-channel bookkeeping, by channel id. */
  channelSummaries(): VcapChannelSummary[] {
    return this.channels.map((c) => ({
      channelId: c.id,
      globalIndex: c.globalIndex,
      url: c.url,
      action: c.action,
      type: c.kind,
      ser: c.ser,
      schemaType: c.family,
      count: c.count,
      size: c.size,
      firstUs: c.firstUs,
      lastUs: c.lastUs,
      loss: this.losses.get(c.url) ?? 0,
      freq: frequency(c.count, c.firstUs, c.lastUs),
    }));
  }

  /**
   * Writes the `VLinkChannel_*` records, the summary and the footer, then closes the writable and checks that the file
   * ends with the MCAP magic (where the writable can read back). Idempotent.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      for (const s of this.channelSummaries()) {
        this.mcap.addMetadata(`${CHANNEL_METADATA_PREFIX}${s.channelId}`, [
          ['index', String(s.channelId - 1)],
          ['type', s.type],
          ['action', actionText(s.action)],
          ['encoding', schemaTypeLabel(s.schemaType)],
          ['ser', s.ser],
          ['count', String(s.count)],
          ['size', String(s.size)],
          ['loss', fixed6(s.loss)],
          ['freq', fixed6(s.freq)],
        ]);
      }
      this.writeCounters();
      this.mcap.end();
    } finally {
      try {
        this.compressor?.close();
      } finally {
        this.writable.close();
      }
    }
    this.writable.verifyMagicEnd?.();
  }

  currentFile(): string {
    return this.file;
  }

  // --- channels and schemas --------------------------------------------------------------------------------------

  private openChannel(frame: Frame, action: ActionType, channels: UrlChannels): ChannelState {
    const ser = frame.serType ?? '';
    checkStorableNames(frame.url, ser, { file: this.file, url: frame.url });
    const kind = urlKindOf(action);
    const { family, schema } = this.resolve(ser, frame.schemaType, action);
    // MCAP's well-known names (`flatbuffer`, `json`, `cdr`, …) and, unlike VLink, a schema and a declared encoding for
    // RPC channels too: each (url, action) channel holds one half of `Req|Resp`, whose schema `resolve` picked.
    const schemaId = schema ? this.schemaIdFor(schema, family) : 0;
    const messageEncoding = messageEncodingFor(family, ser, schema?.encoding);
    // `ser` and `encoding` (vlink-bag, beyond VLink's `{action}`): the channel record is written with the channel's
    // first message, so a file cut before its VLinkChannel_* records still names a raw or RPC url's type (fix).
    const metadata = new Map<string, string>([['action', actionText(action)]]);
    if (ser) metadata.set('ser', ser);
    if (family !== SchemaType.Unknown) metadata.set('encoding', schemaTypeLabel(family));
    const id = this.mcap.addChannel(frame.url, messageEncoding, schemaId, metadata);
    const globalIndex = this.indexFor ? this.indexFor(frame.url, action) : id - 1;
    const ch = new ChannelState(
      id,
      globalIndex,
      frame.url,
      action,
      kind,
      countsForFrequency(action),
      ser,
      family,
      frame,
    );
    channels.byAction[action] = ch;
    this.channels.push(ch);
    return ch;
  }

  /** The channels of `url`, created empty when it has none. */
  private channelsOf(url: string): UrlChannels {
    let channels = this.byUrl.get(url);
    if (channels === undefined) this.byUrl.set(url, (channels = new UrlChannels(url)));
    return channels;
  }

  /** A frame whose (ser, family) differs from the channel's last one: accept, update, or reject. */
  private reconcile(ch: ChannelState, frame: Frame): void {
    const place = { file: this.file, url: ch.url };
    checkStorableNames(ch.url, frame.serType ?? '', place);
    const nextSer = keptSer(ch.ser, frame.serType ?? '', place);
    const { family, schema } = this.resolve(nextSer, frame.schemaType, ch.action);
    ch.family = keptFamily(ch.family, family, place);
    if (nextSer !== ch.ser) {
      ch.ser = nextSer;
      // The channel record is already written (without a schema); still embed the schema the ser now names.
      if (schema) {
        const id = this.schemaIdFor(schema, ch.family);
        if (id) this.mcap.writeSchemaNow(id);
      }
    }
    ch.lastSer = frame.serType;
    ch.lastType = frame.schemaType;
  }

  /** The schema for a ser (an RPC half for Method actions) and the family it implies (format reference §10.1 `resolve_type`). */
  private resolve(
    ser: string,
    explicit: SchemaType,
    action: ActionType,
  ): { family: SchemaType; schema: SchemaData | undefined } {
    return channelFamily(ser, explicit, action, (name, family) => this.context.resolveSchema(name, family));
  }

  /** The schema record id for (name, family), registering it once per file; 0 when VLink would not embed it. */
  private schemaIdFor(schema: SchemaData, family: SchemaType): number {
    const encoding = wellKnownSchemaEncoding(schema.encoding || schemaTypeLabel(family));
    const embeds = embedsSchema(family) || isDecodableSchemaEncoding(encoding);
    if (!embeds || !schema.name || !encoding || schema.data.length === 0) return 0;
    const key = schemaKey(schema.name, family);
    let id = this.schemaIds.get(key);
    if (id === undefined) {
      id = this.mcap.addSchema(schema.name, encoding, schema.data);
      this.schemaIds.set(key, id);
    }
    return id;
  }
}
