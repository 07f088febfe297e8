import {
  ActionType,
  actionText,
  BagError,
  resolveSchemaType,
  schemaTypeLabel,
  serForAction,
  SchemaType,
} from '@vlink/bag-core';
import type { Frame, RecordingContext, ResolvedWriterConfig, SchemaData } from '@vlink/bag-core';
import { checkStorableNames } from '@vlink/bag-core/internal';
import { zstdLevelFor, type Codecs } from '../codecs.js';
import { messageEncodingFor, wellKnownSchemaEncoding } from '../encodings/well-known.js';
import type { Writable } from '../io/writable.js';
import { McapWriter } from '../mcap/mcap-writer.js';
import { logTimeOutOfRange, MAX_LOG_OFFSET_US, publishTimeNs } from '../mcap/message-times.js';
import {
  COUNTERS_METADATA,
  HEADER_METADATA,
  KEY_SEPARATOR,
  VCAP_LIBRARY,
  writesZstdChunks,
} from '../vcap/vcap-format.js';
import { isReaderDescription, PLAIN_ACTION_KEY, PLAIN_SER_KEY, profileOf } from './carried.js';
import { writtenHeader } from '../maintenance/vlink-header.js';

export interface PlainMcapWriterOptions {
  writable: Writable;
  codecs: Codecs;
  config: ResolvedWriterConfig;
  context: RecordingContext;
  /** The file, for error messages. */
  file: string;
}

interface PlainChannel {
  id: number;
  count: number;
}

const MAX_CHUNK_SIZE = 256 * 1024 * 1024;
const NS_PER_US = 1000;

/**
 * Writes a profile-neutral `.mcap` that ROS tools, Foxglove and the `mcap` readers decode: one channel per (url,
 * action, ser) with MCAP's well-known encodings (the source's own encoding per url when `config.carry` names it, so
 * ROS 1 stays `ros1` + `ros1msg`, ROS 2 `cdr` + `ros2msg`, protobuf `protobuf` + FileDescriptorSet, JSON `json`),
 * every schema the recording knows for a url's ser, each frame's `publishTime` and `sequence` where a reader gave them
 * (else the log time and a per-channel count), and the source's metadata records and attachments (`config.carry`).
 *
 * The recording header (tag, process, timezone, start) goes into a `VLinkHeader` metadata record, as in `.vcap`, so
 * `clone` round trips keep it; no other VLink bookkeeping is written (no `VLinkChannel_*`: actions other than Pub are
 * noted in the channel metadata `vlink.action`, a ser that no schema record names (none, or an RPC half) in
 * `vlink.ser`; losses are not stored). `McapForeignReader` reads both back.
 */
export class PlainMcapWriter {
  readonly file: string;
  private readonly mcap: McapWriter;
  private readonly writable: Writable;
  private readonly context: RecordingContext;
  private readonly encodings: Readonly<Record<string, string>>;
  private readonly channelMetadata = new Map<string, Map<string, string>>();
  private readonly channels = new Map<string, PlainChannel>();
  private readonly schemaIds = new Map<string, number>();
  private readonly startNs: bigint;
  private counters: Record<string, Record<string, number>> | undefined;
  private closed = false;

  constructor(options: PlainMcapWriterOptions) {
    const { config, context } = options;
    this.file = options.file;
    this.writable = options.writable;
    this.context = context;
    const carry = config.carry ?? {};
    this.encodings = carry.urlEncodings ?? {};
    const startNs = BigInt(Math.trunc(context.startTimestamp)) * 1_000_000n;
    this.startNs = startNs;
    const zstd = writesZstdChunks(config);
    this.mcap = new McapWriter({
      writable: options.writable,
      codecs: options.codecs,
      profile: profileOf(carry.metadata),
      library: VCAP_LIBRARY,
      chunkSize: config.cacheSize > 0 ? Math.min(config.cacheSize, MAX_CHUNK_SIZE) : 0,
      compression: zstd ? 'zstd' : '',
      compressionLevel: zstdLevelFor(config.compressLevel),
      chunkCrc: config.enableChunkCrc,
      timeBase: startNs,
      file: options.file,
    });
    this.mcap.start();
    this.mcap.addMetadata(HEADER_METADATA, writtenHeader(context, zstd, context.startTimestamp));
    for (const record of carry.metadata ?? []) {
      const channelTopic = record.name.startsWith('mcap.channel.') ? record.name.slice('mcap.channel.'.length) : '';
      if (channelTopic) this.channelMetadata.set(channelTopic, new Map(Object.entries(record.values)));
      else if (!isReaderDescription(record.name)) this.mcap.addMetadata(record.name, Object.entries(record.values));
    }
    for (const a of carry.attachments ?? [])
      this.mcap.addAttachment(a.name, a.mediaType, BigInt(a.logTime), BigInt(a.createTime), a.data);
    this.mcap.flush();
  }

  write(frame: Frame): void {
    if (this.closed) throw new BagError('CLOSED', 'writer is closed', { file: this.file, url: frame.url });
    const ts = frame.timestamp;
    if (!(ts >= 0) || !Number.isFinite(ts))
      throw new BagError('INVALID_ARGUMENT', `bad timestamp ${ts}`, { file: this.file, url: frame.url });
    if (ts > MAX_LOG_OFFSET_US) throw logTimeOutOfRange(ts, this.file, frame.url);
    const action = frame.actionType;
    const ser = frame.serType ?? '';
    const key = `${frame.url}${KEY_SEPARATOR}${action}${KEY_SEPARATOR}${ser}`;
    const ch = this.channels.get(key) ?? this.openChannel(key, frame, action, ser);
    ch.count++;
    const logNs = Math.floor(ts) * NS_PER_US;
    const publish = frame.publishTime;
    const publishNs =
      publish === undefined || !Number.isFinite(publish)
        ? logNs
        : publishTimeNs(Math.floor(publish), logNs, this.startNs);
    const seq = frame.sequence;
    const sequence = seq !== undefined && Number.isInteger(seq) && seq >= 0 && seq <= 0xffffffff ? seq : ch.count;
    this.mcap.addMessage(ch.id, sequence, logNs, frame.data, publishNs);
  }

  /** Embeds a schema now (its Schema record), whatever channels use it. */
  writeSchema(schema: SchemaData): void {
    if (this.closed) throw new BagError('CLOSED', 'writer is closed', { file: this.file });
    const id = this.schemaIdFor(schema);
    if (id) this.mcap.writeSchemaNow(id);
  }

  /** Plain MCAP has no place for VLink's loss ratios. */
  setUrlLoss(): void {}

  setCounters(table: Record<string, Record<string, number>>): void {
    this.counters = table;
  }

  commit(): void {
    if (!this.closed) this.mcap.sync();
  }

  tick(now = Date.now()): void {
    if (!this.closed && this.mcap.pendingAgeMs(now) > 3000) this.mcap.sync();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      const counters = Object.entries(this.counters ?? {}).filter(([, causes]) => Object.keys(causes).length > 0);
      if (counters.length > 0)
        this.mcap.addMetadata(
          COUNTERS_METADATA,
          counters.map(([url, causes]) => [url, JSON.stringify(causes)]),
        );
      this.mcap.end();
    } finally {
      this.writable.close();
    }
    this.writable.verifyMagicEnd?.();
  }

  currentFile(): string {
    return this.file;
  }

  private openChannel(key: string, frame: Frame, action: ActionType, ser: string): PlainChannel {
    checkStorableNames(frame.url, ser, { file: this.file, url: frame.url });
    const schema = ser ? this.schemaFor(serForAction(ser, action), frame.schemaType) : undefined;
    const family = resolveSchemaType(
      frame.schemaType,
      ser,
      schema ? schema.encoding || schemaTypeLabel(schema.schemaType) : undefined,
    );
    const schemaId = schema ? this.schemaIdFor(schema) : 0;
    const metadata = new Map(this.channelMetadata.get(frame.url) ?? []);
    if (action !== ActionType.Publish) metadata.set(PLAIN_ACTION_KEY, actionText(action));
    // A type name without a schema (ULog's logging messages, a raw url's ser) has no Schema record to live in, and an
    // RPC channel's schema names only its half of `Req|Resp`.
    if (ser && (schemaId === 0 || schema?.name !== ser)) metadata.set(PLAIN_SER_KEY, ser);
    const id = this.mcap.addChannel(frame.url, this.encodingOf(frame.url, family, ser, schema), schemaId, metadata);
    const ch = { id, count: 0 };
    this.channels.set(key, ch);
    return ch;
  }

  /**
   * The schema the recording has for a ser: under the frame's family, else under none (a `jsonschema` or `ulog`
   * schema read back from a `.vdb` has no VLink family while its frames are Raw).
   */
  private schemaFor(name: string, family: SchemaType): SchemaData | undefined {
    const found = this.context.resolveSchema(name, family);
    return found || family === SchemaType.Unknown ? found : this.context.resolveSchema(name, SchemaType.Unknown);
  }

  /** The source's encoding for the url when known, else the well-known name for its family/ser/schema. */
  private encodingOf(url: string, family: SchemaType, ser: string, schema: SchemaData | undefined): string {
    const carried = this.encodings[url];
    if (carried) return carried;
    const known = messageEncodingFor(family, ser, schema?.encoding);
    // A schema language we do not know (e.g. `ulog`) names its own message encoding better than `unknown`.
    return known === 'unknown' && schema?.encoding ? schema.encoding : known;
  }

  /** Every schema with a name and data is kept (its encoding under the registry's spelling), once per file. */
  private schemaIdFor(schema: SchemaData): number {
    const encoding = wellKnownSchemaEncoding(schema.encoding || schemaTypeLabel(schema.schemaType));
    if (!schema.name || schema.data.length === 0) return 0;
    const key = `${schema.name}${KEY_SEPARATOR}${encoding}`;
    let id = this.schemaIds.get(key);
    if (id === undefined) {
      id = this.mcap.addSchema(schema.name, encoding, schema.data);
      this.schemaIds.set(key, id);
    }
    return id;
  }
}
