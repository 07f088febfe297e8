import { DEFAULT_MERGE_LIMITS, type MergeLimits, type MergeSource, TimeMerge } from '@vlink/bag-core/internal';
import type { Readable } from '../io/readable.js';
import { splitTime, type Block } from './blocks.js';
import type { ChunkLoader, ChunkRecords } from './chunk-loader.js';
import { MESSAGE_FIXED, Opcode, RECORD_PREFIX } from './constants.js';
import { CursorFields, MessageCursor, type MessageFields } from './message-cursor.js';
import type { MessageFilter } from './message-filter.js';

/**
 * One block of the merge: its next message's log time (`hi`/`lo`), its file offset as the rank that breaks ties (file
 * order), the bytes it holds (0 for a streamed span, whose window is bounded on its own), and how to hand the message
 * out.
 */
interface OpenBlock extends MergeSource {
  /** The block's own loader, whose buffer holds its messages; lent to the next block once this one is done. */
  readonly loader: ChunkLoader;
  /** Copies the current message into `out`. */
  emit(out: MessageFields): void;
}

/** Per message of a `SortedChunk`: log time, publish time (32-bit halves), sequence, channel id. */
const STRIDE = 6;

/**
 * The wanted messages of a chunk written out of order, indexed when the chunk is opened and handed out in log-time
 * order (file order for ties). The payloads stay views into the loader's buffer, which this chunk keeps until it is
 * done. A chunk that turns out damaged part-way hands out what came before the damage, then throws its error, as the
 * file-order cursor does.
 */
class SortedChunk implements OpenBlock {
  hi = 0;
  lo = 0;
  private readonly fields: Uint32Array;
  private readonly data: Uint8Array[] = [];
  private readonly count: number;
  private readonly order: Uint32Array | undefined;
  private readonly error: unknown;
  private k = -1;
  private at = 0;

  constructor(
    cursor: MessageCursor,
    readonly rank: number,
    readonly loader: ChunkLoader,
    readonly bytes: number,
  ) {
    let fields = new Uint32Array(STRIDE * 256);
    let n = 0;
    let sorted = true;
    let error: unknown;
    try {
      while (cursor.next()) {
        if ((n + 1) * STRIDE > fields.length) {
          const grown = new Uint32Array(fields.length * 2);
          grown.set(fields);
          fields = grown;
        }
        const i = n * STRIDE;
        const hi = cursor.timeHi;
        const lo = cursor.timeLo;
        if (n > 0 && (hi < fields[i - STRIDE]! || (hi === fields[i - STRIDE]! && lo < fields[i - STRIDE + 1]!)))
          sorted = false;
        fields[i] = hi;
        fields[i + 1] = lo;
        fields[i + 2] = cursor.publishHi;
        fields[i + 3] = cursor.publishLo;
        fields[i + 4] = cursor.sequence;
        fields[i + 5] = cursor.channelId;
        this.data.push(cursor.data);
        n++;
      }
    } catch (caught) {
      error = caught;
    }
    this.fields = fields;
    this.count = n;
    this.error = error;
    if (!sorted) {
      const order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      // Typed-array sort is not guaranteed stable: the index breaks ties.
      order.sort((a, b) => {
        const x = a * STRIDE;
        const y = b * STRIDE;
        return fields[x]! - fields[y]! || fields[x + 1]! - fields[y + 1]! || a - b;
      });
      this.order = order;
    }
  }

  step(): boolean {
    if (++this.k >= this.count) {
      if (this.error !== undefined) throw this.error;
      return false;
    }
    const i = this.order ? this.order[this.k]! : this.k;
    this.at = i;
    this.hi = this.fields[i * STRIDE]!;
    this.lo = this.fields[i * STRIDE + 1]!;
    return true;
  }

  emit(out: MessageFields): void {
    const f = this.fields;
    const i = this.at * STRIDE;
    out.timeHi = f[i]!;
    out.timeLo = f[i + 1]!;
    out.publishHi = f[i + 2]!;
    out.publishLo = f[i + 3]!;
    out.sequence = f[i + 4]!;
    out.channelId = f[i + 5]!;
    out.data = this.data[this.at]!;
  }
}

/**
 * A block read as it lies: a chunk whose messages are already in log-time order (what recorders write), or records
 * outside chunks (a file written without chunks), which stay in file order: such a span may be the whole data
 * section, so it is streamed, never indexed, as every streaming MCAP reader reads it.
 */
class StreamedBlock implements OpenBlock {
  hi = 0;
  lo = 0;

  constructor(
    private readonly cursor: MessageCursor,
    readonly rank: number,
    readonly loader: ChunkLoader,
    readonly bytes: number,
  ) {}

  step(): boolean {
    if (!this.cursor.next()) return false;
    this.hi = this.cursor.timeHi;
    this.lo = this.cursor.timeLo;
    return true;
  }

  emit(out: MessageFields): void {
    const c = this.cursor;
    out.timeHi = c.timeHi;
    out.timeLo = c.timeLo;
    out.publishHi = c.publishHi;
    out.publishLo = c.publishLo;
    out.sequence = c.sequence;
    out.channelId = c.channelId;
    out.data = c.data;
  }
}

/**
 * Messages in log-time order, ties in file order: what `@mcap/core`'s indexed reader, the `mcap` CLI and rosbag2 give
 * for an MCAP file written out of order (several threads, late messages). Blocks are opened in order of their first
 * log time, each only once the earliest pending message is no earlier than its start, so a file whose blocks do not
 * overlap in time holds one chunk at a time, as the file-order cursor does; overlapping chunks are merged by their
 * next message (core's `TimeMerge`, which bounds what is held open: past that, `LIMIT_REACHED`). Same contract as
 * `MessageCursor`: `data` stays valid until the next step.
 */
export class LogTimeCursor extends CursorFields {
  private readonly blocks: Block[];
  private readonly starts: Uint32Array;
  private readonly merge: TimeMerge<OpenBlock>;
  /** Loaders of finished blocks, lent to the next ones (their buffers are reused, not reallocated per chunk). */
  private readonly spare: ChunkLoader[] = [];

  constructor(
    private readonly readable: Readable,
    private readonly newLoader: () => ChunkLoader,
    blocks: readonly Block[],
    private readonly filter: MessageFilter,
    private readonly file: string | undefined,
    limits: MergeLimits = DEFAULT_MERGE_LIMITS,
  ) {
    super();
    this.blocks = blocks
      .filter((b) => filter.wants(b))
      .sort((a, b) => (a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : a.offset - b.offset));
    this.starts = new Uint32Array(this.blocks.length * 2);
    this.blocks.forEach((b, i) => {
      const [hi, lo] = splitTime(b.startTime < 0n ? 0n : b.startTime);
      this.starts[i * 2] = hi;
      this.starts[i * 2 + 1] = lo;
    });
    this.merge = new TimeMerge<OpenBlock>(
      this.blocks.length,
      (i) => this.starts[i * 2]!,
      (i) => this.starts[i * 2 + 1]!,
      (i) => this.openBlock(i),
      (block) => this.spare.push(block.loader),
      file,
      limits,
    );
  }

  next(): boolean {
    const top = this.merge.next();
    if (top === undefined) return false;
    top.emit(this);
    return true;
  }

  private openBlock(i: number): OpenBlock {
    const block = this.blocks[i]!;
    const loader = this.spare.pop() ?? this.newLoader();
    if (block.kind === 'span') {
      const cursor = new MessageCursor(this.readable, loader, [block], this.filter, this.file);
      return new StreamedBlock(cursor, block.offset, loader, 0);
    }
    const records = loader.loadBlock(block);
    const cursor = new MessageCursor(this.readable, loader, [], this.filter, this.file);
    cursor.startChunk(records, block.offset);
    const bytes = records.end - records.start;
    return inLogTimeOrder(records)
      ? new StreamedBlock(cursor, block.offset, loader, bytes)
      : new SortedChunk(cursor, block.offset, loader, bytes);
  }
}

/**
 * Whether the messages of a loaded chunk are in log-time order: one pass over the record headers, no payload touched.
 * A chunk whose records do not line up says false, and the sorting path's cursor reports the damage where it is.
 */
function inLogTimeOrder(records: ChunkRecords): boolean {
  const { bytes, view: v, end } = records;
  let pos = records.start;
  let hi = 0;
  let lo = 0;
  while (pos < end) {
    if (end - pos < RECORD_PREFIX) return false;
    const len = v.getUint32(pos + 1, true);
    if (v.getUint32(pos + 5, true) !== 0 || len > end - pos - RECORD_PREFIX) return false;
    if (bytes[pos] === Opcode.Message) {
      if (len < MESSAGE_FIXED) return false;
      const l = v.getUint32(pos + 15, true);
      const h = v.getUint32(pos + 19, true);
      if (h < hi || (h === hi && l < lo)) return false;
      hi = h;
      lo = l;
    }
    pos += RECORD_PREFIX + len;
  }
  return true;
}
