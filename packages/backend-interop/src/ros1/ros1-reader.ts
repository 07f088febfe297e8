import { type CursorQuery, type Frame, type ReaderOptions, type SchemaData, SchemaType } from '@vlink/bag-core';
import { FileReadable } from '@vlink/bag-mcap';
import { corrupt } from '../common/errors.js';
import { type ForeignUrl, foreignInfo, metadataEntry } from '../common/foreign-info.js';
import { ForeignReader, keysForUrls } from '../common/reader-base.js';
import { applyRos1Header } from '../common/ros-header.js';
import { TimeBase } from '../common/time-base.js';
import { BagFile, compareTime, type Ros1Chunk, type Ros1Connection } from './bag-file.js';
import { ChunkMessages } from './chunk-messages.js';
import { type ChunkDecompress, loadRos1Codecs } from './codecs.js';
import { closingOnError, reusableFrame } from '../common/reader-helpers.js';

/** A chunk being merged: its messages and the next one to hand out. */
interface OpenChunk {
  messages: ChunkMessages;
  next: number;
  /** Position in the time-ordered chunk list: breaks ties between chunks. */
  rank: number;
}

/**
 * ROS 1 bag v2.0 through the Backend seam, synchronously: our own record parser (the bag format is a dozen fixed
 * records; `@foxglove/rosbag` reads it only asynchronously), bz2/lz4 chunks by WebAssembly codecs. Messages come in
 * log-time order as rosbag's readers give them: chunks are merged by time, a chunk's messages sorted when it was
 * written out of order. topic → url, type → ser, family Unknown (ROS 1 has no VLink family; `encoding` is `ros1`),
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
    const schemas = new Map<string, SchemaData>();
    for (const c of bag.connections.values()) {
      const url = urls.get(c.topic);
      if (url) url.count += counts.get(c.id) ?? 0;
      else
        urls.set(c.topic, {
          url: c.topic,
          ser: c.type,
          schemaType: SchemaType.Unknown,
          encoding: 'ros1',
          count: counts.get(c.id) ?? 0,
          size: 0,
        });
      if (!schemas.has(c.type))
        schemas.set(c.type, {
          name: c.type,
          encoding: 'ros1msg',
          schemaType: SchemaType.Unknown,
          data: new TextEncoder().encode(c.definition),
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
        ...(bag.problems.length > 0
          ? [{ name: 'rosbag.problems', values: Object.fromEntries(bag.problems.map((p, i) => [String(i), p])) }]
          : []),
      ],
    });
    super(path, facts, [...schemas.values()]);
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
    const open: OpenChunk[] = [];
    let next = 0;
    for (;;) {
      // Open every chunk that starts no later than the earliest pending message (usually just the next one).
      let top = earliest(open);
      while (next < chunks.length && (top === undefined || startsBy(chunks[next]!, top))) {
        const chunk = chunks[next]!;
        const messages = new ChunkMessages(
          this.bag.readChunk(chunk, this.codecs),
          chunk.count,
          this.path,
          chunk.position,
        );
        if (messages.count > 0) open.push({ messages, next: 0, rank: next });
        next++;
        top = earliest(open);
      }
      if (top === undefined) return;
      const m = top.messages;
      const i = m.order[top.next++]!;
      if (top.next >= m.count) open.splice(open.indexOf(top), 1);
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

/** Whether `chunk` starts no later than the next message of `open` (then it must be opened before going on). */
function startsBy(chunk: Ros1Chunk, open: OpenChunk): boolean {
  const m = open.messages;
  const i = m.order[open.next]!;
  const sec = m.sec[i]!;
  return chunk.start[0] < sec || (chunk.start[0] === sec && chunk.start[1] <= m.nsec[i]!);
}

/** The open chunk whose next message is earliest (ties: the earlier chunk). Allocation-free: runs per message. */
function earliest(open: OpenChunk[]): OpenChunk | undefined {
  if (open.length <= 1) return open[0];
  let best = open[0]!;
  for (let k = 1; k < open.length; k++) {
    const c = open[k]!;
    const a = c.messages.order[c.next]!;
    const b = best.messages.order[best.next]!;
    const order = c.messages.sec[a]! - best.messages.sec[b]! || c.messages.nsec[a]! - best.messages.nsec[b]!;
    if (order < 0 || (order === 0 && c.rank < best.rank)) best = c;
  }
  return best;
}
