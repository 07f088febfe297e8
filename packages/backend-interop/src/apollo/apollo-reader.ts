import { type CursorQuery, type Frame, type ReaderOptions, type SchemaData, SchemaType } from '@vlink/bag-core';
import { FileReadable } from '@vlink/bag-mcap';
import { maxBig, minBig } from '../common/bigints.js';
import { asCorrupt } from '../common/errors.js';
import { type ForeignUrl, foreignInfo, metadataEntry } from '../common/foreign-info.js';
import { ForeignReader } from '../common/reader-base.js';
import { inWindow, TimeBase } from '../common/time-base.js';
import { RecordFile } from './record-file.js';
import { protoDescToFileDescriptorSet } from './record-proto.js';
import { closingOnError, reusableFrame } from '../common/reader-helpers.js';

const COMPRESSION = ['none', 'bz2', 'lz4'];

function descriptorSet(protoDesc: Uint8Array, channel: string, path: string): Uint8Array {
  try {
    return protoDescToFileDescriptorSet(protoDesc);
  } catch (error) {
    throw asCorrupt(error, `bad proto descriptor of channel ${channel}`, path);
  }
}

/**
 * An Apollo Cyber RT `.record` through the Backend seam, our own reader of the published format (no maintained
 * JavaScript reader exists; the sections are protobuf messages, decoded with `@bufbuild/protobuf`). Channel name →
 * url, message type → ser, family Protobuf, the channel's `ProtoDesc` tree → a FileDescriptorSet schema, the
 * message's `time` (ns) → timestamp. Chunks in begin-time order, messages in body order, as cyber_record reads them.
 */
export class ApolloReader extends ForeignReader {
  private readonly base: TimeBase;
  private readonly types = new Map<string, string>();

  private constructor(
    path: string,
    private readonly record: RecordFile,
    private readonly readable: FileReadable,
  ) {
    const times = record.chunks.filter((c) => c.messageNumber > 0);
    const first = minBig(times.map((c) => c.beginTime));
    const last = maxBig(times.map((c) => c.endTime));
    const base = TimeBase.fromFirstNs(first);
    const urls: ForeignUrl[] = [];
    const schemas = new Map<string, SchemaData>();
    for (const c of record.channels) {
      urls.push({
        url: c.name,
        ser: c.messageType,
        schemaType: SchemaType.Protobuf,
        encoding: 'protobuf',
        count: c.messageNumber,
        size: 0,
      });
      if (!schemas.has(c.messageType) && c.protoDesc.length > 0)
        schemas.set(c.messageType, {
          name: c.messageType,
          encoding: 'protobuf',
          schemaType: SchemaType.Protobuf,
          data: descriptorSet(c.protoDesc, c.name, path),
        });
    }
    const h = record.header;
    const facts = foreignInfo({
      path,
      format: 'record',
      version: `${h.majorVersion}.${h.minorVersion}`,
      storageType: 'cyber-record',
      compressionType: COMPRESSION[h.compress] ?? String(h.compress),
      base,
      firstNs: first,
      lastNs: last,
      hasCompleted: record.mode === 'indexed' && record.problem === undefined,
      fileSize: readable.size(),
      hasSchema: schemas.size > 0,
      urls,
      metadata: [
        metadataEntry('record.header', {
          major_version: h.majorVersion,
          minor_version: h.minorVersion,
          compress: COMPRESSION[h.compress] ?? h.compress,
          chunk_interval: h.chunkInterval,
          segment_interval: h.segmentInterval,
          chunk_raw_size: h.chunkRawSize,
          segment_raw_size: h.segmentRawSize,
          chunk_number: h.chunkNumber,
          channel_number: h.channelNumber,
          message_number: h.messageNumber,
          begin_time_ns: h.beginTime,
          end_time_ns: h.endTime,
          is_complete: h.isComplete,
          problem: record.problem,
        }),
        // The same under the name every foreign reader lists what it read around by (`<format>.problems`).
        ...(record.problem === undefined ? [] : [{ name: 'record.problems', values: { '0': record.problem } }]),
      ],
    });
    super(path, facts, [...schemas.values()]);
    this.base = base;
    for (const c of record.channels) this.types.set(c.name, c.messageType);
  }

  static async open(path: string, options: ReaderOptions): Promise<ApolloReader> {
    const readable = new FileReadable(path);
    return closingOnError(
      readable,
      () => new ApolloReader(path, new RecordFile(path, readable, options.tryToFix === true), readable),
    );
  }

  *frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.ensureOpen();
    const wanted = query.urls ? new Set(query.urls) : undefined;
    if (wanted?.size === 0) return;
    const { beginUs, endUs } = query;
    const base = this.base;
    const frame = reusableFrame({ schemaType: SchemaType.Protobuf });
    for (const chunk of this.record.chunks) {
      if (beginUs !== undefined && base.usFromNs(chunk.endTime) < beginUs) continue;
      if (endUs !== undefined && base.usFromNs(chunk.beginTime) > endUs) continue;
      // A chunk's messages are decoded (one protobuf message) and checked together, then handed out one by one.
      for (const m of this.record.readChunk(chunk)) {
        const serType = this.types.get(m.channel);
        if (serType === undefined || (wanted && !wanted.has(m.channel))) continue;
        const timestamp = base.usFromNs(m.time);
        if (!inWindow(timestamp, beginUs, endUs)) continue;
        frame.timestamp = timestamp;
        frame.url = m.channel;
        frame.serType = serType;
        frame.data = m.content;
        yield frame;
        if (this.closed) return;
      }
    }
  }

  protected release(): void {
    this.readable.close();
  }
}
