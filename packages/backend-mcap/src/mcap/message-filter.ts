import { type Block, splitTime } from './blocks.js';

export interface MessageQuery {
  /** Inclusive log time bounds in ns since the epoch. */
  startTime?: bigint;
  endTime?: bigint;
  /** Channel ids to keep; undefined keeps all. */
  channelIds?: Iterable<number>;
  /**
   * `file` (default): blocks by offset, records in order inside each block, as VLink reads `.vcap` (format notes
   * §8). `log-time`: by log time, ties in file order, as the reference MCAP readers (`@mcap/core`'s indexed reader,
   * the `mcap` CLI, rosbag2) give a file's messages.
   */
  order?: 'file' | 'log-time';
}

const MAX_HI = 0xffffffff;

/** A query prepared once for the cursors: time bounds as 32-bit halves and channel ids as a lookup table. */
export class MessageFilter {
  readonly sHi: number;
  readonly sLo: number;
  readonly eHi: number;
  readonly eLo: number;
  /** `flags[id] === 1` for a wanted channel id; undefined when every channel is wanted. */
  readonly flags: Uint8Array | undefined;
  private readonly start: bigint;
  private readonly end: bigint;
  private readonly wanted: ReadonlySet<number> | undefined;

  constructor(query: MessageQuery) {
    this.start = query.startTime ?? 0n;
    this.end = query.endTime ?? 0xffffffffffffffffn;
    [this.sHi, this.sLo] = splitTime(this.start < 0n ? 0n : this.start);
    [this.eHi, this.eLo] = this.end > 0xffffffffffffffffn ? [MAX_HI, MAX_HI] : splitTime(this.end);
    if (query.channelIds) {
      const wanted = new Set(query.channelIds);
      this.wanted = wanted;
      this.flags = new Uint8Array(65536);
      for (const id of wanted) if (id >= 0 && id < 65536) this.flags[id] = 1;
    }
  }

  /** Whether `block` may hold a wanted message: its time range meets the bounds and its channels the ids. */
  wants(block: Block): boolean {
    const { start, end, wanted } = this;
    if (start > end || block.endTime < start || block.startTime > end) return false;
    if (wanted && block.channels) {
      for (const id of block.channels) if (wanted.has(id)) return true;
      return false;
    }
    return true;
  }
}
