import {
  BagError,
  type CursorQuery,
  type Frame,
  type ReaderOptions,
  type SchemaData,
  SchemaType,
  problemsRecord,
} from '@vlink/bag-core';
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
    tryToFix: boolean,
  ) {
    const times = record.chunks.filter((c) => c.messageNumber > 0);
    const first = minBig(times.map((c) => c.beginTime));
    const last = maxBig(times.map((c) => c.endTime));
    const base = TimeBase.fromFirstNs(first);
    const urls: ForeignUrl[] = [];
    const schemas = new Map<string, SchemaData>();
    const undescribed: string[] = [];
    for (const c of record.channels) {
      urls.push({
        url: c.name,
        ser: c.messageType,
        schemaType: SchemaType.Protobuf,
        encoding: 'protobuf',
        count: c.messageNumber,
        size: 0,
      });
      if (schemas.has(c.messageType) || c.protoDesc.length === 0) continue;
      let data: Uint8Array;
      try {
        data = descriptorSet(c.protoDesc, c.name, path);
      } catch (error) {
        // With tryToFix a damaged descriptor costs its channel the schema, not the record its messages (found by
        // probing: 64 zeroed bytes in the index's channel cache, and tryToFix read nothing).
        if (!tryToFix || !BagError.isInstance(error)) throw error;
        undescribed.push(`${c.name} (${error.detail})`);
        continue;
      }
      schemas.set(c.messageType, { name: c.messageType, encoding: 'protobuf', schemaType: SchemaType.Protobuf, data });
    }
    const problem = [
      record.problem,
      undescribed.length === 0
        ? undefined
        : `the descriptors of ${undescribed.length} channel(s) do not decode, so their messages are read without a schema: ${undescribed.join('; ')}`,
    ]
      .filter((p) => p !== undefined)
      .join('; ');
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
      hasCompleted: record.mode === 'indexed' && problem === '',
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
          problem: problem === '' ? undefined : problem,
        }),
        // The same under the name every foreign reader lists what it read around by (`<format>.problems`).
        ...problemsRecord('record', problem === '' ? [] : [problem]),
      ],
    });
    super(path, facts, [...schemas.values()]);
    this.base = base;
    for (const c of record.channels) this.types.set(c.name, c.messageType);
  }

  static async open(path: string, options: ReaderOptions): Promise<ApolloReader> {
    const readable = new FileReadable(path);
    return closingOnError(readable, () => {
      const tryToFix = options.tryToFix === true;
      return new ApolloReader(path, new RecordFile(path, readable, tryToFix), readable, tryToFix);
    });
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
