import {
  type CursorQuery,
  type Frame,
  type ReaderOptions,
  type SchemaData,
  SchemaType,
  problemsRecord,
} from '@vlink/bag-core';
import { type MergeSource, TimeMerge } from '@vlink/bag-core/internal';
import { FileReadable } from '@vlink/bag-mcap';
import { corrupt } from '../common/errors.js';
import { type ForeignUrl, foreignInfo, metadataEntry } from '../common/foreign-info.js';
import { ForeignReader, keysForUrls } from '../common/reader-base.js';
import { applyRos1Header } from '../common/ros-header.js';
import { TimeBase } from '../common/time-base.js';
import { BagFile, compareTime, type Ros1Connection } from './bag-file.js';
import { checkAgainstInfo } from './chunk-info-check.js';
import { ChunkMessages } from './chunk-messages.js';
import { type ChunkDecompress, loadRos1Codecs } from './codecs.js';
import { closingOnError, reusableFrame } from '../common/reader-helpers.js';

/** A chunk being merged (core's `TimeMerge`): its messages in log-time order and the current one (`at`). */
class OpenChunk implements MergeSource {
  hi = 0;
  lo = 0;
  /** Index of the current message in `messages`. */
  at = 0;
  private k = -1;

  constructor(
    readonly messages: ChunkMessages,
    /** Position in the time-ordered chunk list: breaks ties between chunks. */
    readonly rank: number,
  ) {}

  get bytes(): number {
    return this.messages.bytes.byteLength;
  }

  step(): boolean {
    const m = this.messages;
    if (++this.k >= m.count) return false;
    this.at = m.order[this.k]!;
    this.hi = m.sec[this.at]!;
    this.lo = m.nsec[this.at]!;
    return true;
  }
}

/**
 * ROS 1 bag v2.0 through the Backend seam, synchronously: our own record parser (the bag format is a dozen fixed
 * records; `@foxglove/rosbag` reads it only asynchronously), bz2/lz4 chunks by WebAssembly codecs. Messages come in
 * log-time order as rosbag's readers give them: chunks are merged by time (core's `TimeMerge`, bounded), a chunk's
 * messages sorted when it was written out of order. topic → url, type → ser, family Unknown (ROS 1 has no VLink family; `encoding` is `ros1`),
 * message definitions as `ros1msg` schemas, the connection's receive time → timestamp, the `std_msgs/Header` stamp
 * and seq of types that start with one → publishTime and sequence.
 */
export class Ros1Reader extends ForeignReader {
  private readonly urlOf = new Map<number, string>();
  private readonly base: TimeBase;

  private constructor(
    path: string,
    private readonly bag: BagFile,
    private readonly readable: FileReadable,
    private readonly codecs: Record<string, ChunkDecompress>,
  ) {
    const first = bag.chunks.reduce<[number, number] | undefined>(
      (min, c) => (c.count > 0 && (!min || compareTime(c.start, min) < 0) ? c.start : min),
      undefined,
    );
    const last = bag.chunks.reduce<[number, number] | undefined>(
      (max, c) => (c.count > 0 && (!max || compareTime(c.end, max) > 0) ? c.end : max),
      undefined,
    );
    const toNs = (t: [number, number] | undefined) => (t ? BigInt(t[0]) * 1_000_000_000n + BigInt(t[1]) : undefined);
    const base = TimeBase.fromFirstNs(toNs(first));
    const urls = new Map<string, ForeignUrl>();
    const counts = new Map<number, number>();
    for (const chunk of bag.chunks) for (const [id, n] of chunk.connections) counts.set(id, (counts.get(id) ?? 0) + n);
    // One schema per distinct (type, definition): two versions of a message recorded together share the type name
    // but not the layout, and each topic's payloads decode only with their own connection's definition.
    const schemas = new Map<string, SchemaData & { index: number }>();
    for (const c of bag.connections.values()) {
      const key = `${c.type}\u0000${c.definition}`;
      let schema = schemas.get(key);
      if (schema === undefined) {
        schema = {
          index: schemas.size,
          name: c.type,
          encoding: 'ros1msg',
          schemaType: SchemaType.Unknown,
          data: new TextEncoder().encode(c.definition),
        };
        schemas.set(key, schema);
      }
      const url = urls.get(c.topic);
      if (url) {
        url.count += counts.get(c.id) ?? 0;
        // Connections of one topic with different definitions: no single schema is the topic's.
        if (url.schemaIndex !== schema.index) delete url.schemaIndex;
      } else
        urls.set(c.topic, {
          url: c.topic,
          ser: c.type,
          schemaType: SchemaType.Unknown,
          encoding: 'ros1',
          count: counts.get(c.id) ?? 0,
          size: 0,
          schemaIndex: schema.index,
        });
    }
    const facts = foreignInfo({
      path,
      format: 'bag',
      version: '2.0',
      storageType: 'rosbag',
      compressionType: bag.compression(),
      base,
      firstNs: toNs(first),
      lastNs: toNs(last),
      hasCompleted: bag.problems.length === 0,
      fileSize: readable.size(),
      hasSchema: [...schemas.values()].some((s) => s.data.length > 0),
      urls: [...urls.values()],
      metadata: [
        ...[...bag.connections.values()].map((c) =>
          metadataEntry('rosbag.connection', {
            id: c.id,
            topic: c.topic,
            type: c.type,
            md5sum: c.md5sum,
            callerid: c.callerid,
            latching: c.latching,
          }),
        ),
        // Opened with tryToFix despite damage: what was read around, so nothing is dropped silently.
        ...problemsRecord('rosbag', bag.problems),
      ],
    });
    super(
      path,
      facts,
      [...schemas.values()].map(({ index: _index, ...schema }) => schema),
    );
    this.base = base;
    for (const c of bag.connections.values()) this.urlOf.set(c.id, c.topic);
  }

  static async open(path: string, options: ReaderOptions): Promise<Ros1Reader> {
    const codecs = await loadRos1Codecs();
    const readable = new FileReadable(path);
    return closingOnError(readable, () => {
      const bag = new BagFile(path, readable, options.tryToFix === true ? codecs : undefined);
      return new Ros1Reader(path, bag, readable, codecs);
    });
  }

  *frames(query: CursorQuery = {}): IterableIterator<Frame> {
    this.ensureOpen();
    const ids = keysForUrls(this.urlOf, query.urls);
    if (ids?.length === 0) return;
    const wanted = ids ? new Set(ids) : undefined;
    const { beginUs, endUs } = query;
    const base = this.base;
    const chunks = this.bag.chunks.filter(
      (c) =>
        (!wanted || [...c.connections.keys()].some((id) => wanted.has(id))) &&
        (beginUs === undefined || base.usFromSecNsec(c.end[0], c.end[1]) >= beginUs) &&
        (endUs === undefined || base.usFromSecNsec(c.start[0], c.start[1]) <= endUs),
    );
    const connections: Array<Ros1Connection | undefined> = [];
    for (const c of this.bag.connections.values()) connections[c.id] = c;
    const frame = reusableFrame({ publishTime: undefined, sequence: undefined });
    const merge = new TimeMerge<OpenChunk>(
      chunks.length,
      (i) => chunks[i]!.start[0],
      (i) => chunks[i]!.start[1],
      (i) => {
        const chunk = chunks[i]!;
        const messages = new ChunkMessages(
          this.bag.readChunk(chunk, this.codecs),
          chunk.count,
          this.path,
          chunk.position,
        );
        checkAgainstInfo(messages, chunk, this.path);
        return new OpenChunk(messages, i);
      },
      undefined,
      this.path,
    );
    for (let top = merge.next(); top !== undefined; top = merge.next()) {
      const m = top.messages;
      const i = top.at;
      const id = m.conn[i]!;
      if (wanted && !wanted.has(id)) continue;
      const connection = connections[id];
      if (!connection)
        throw corrupt(`message of connection ${id}, which the index does not define`, this.path, m.chunkOffset);
      const timestamp = base.usFromSecNsec(m.sec[i]!, m.nsec[i]!);
      if ((beginUs !== undefined && timestamp < beginUs) || (endUs !== undefined && timestamp > endUs)) continue;
      frame.timestamp = timestamp;
      frame.url = connection.topic;
      frame.serType = connection.type;
      frame.data = m.bytes.subarray(m.start[i]!, m.end[i]!);
      if (connection.header) applyRos1Header(frame, frame.data, base);
      else frame.publishTime = frame.sequence = undefined;
      yield frame;
      if (this.closed) return;
    }
  }

  protected release(): void {
    this.readable.close();
  }
}
