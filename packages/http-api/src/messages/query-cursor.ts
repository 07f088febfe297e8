import type { BagReader, Frame } from '@vlink/bag';
import type { MessageQuery, Position } from './cursor-token.js';

/**
 * Reads a query's frames from a position and tracks the position to hand out as the next token.
 *
 * Resuming seeks with the backend's own time filter (`beginTime` = the last timestamp) and then skips the frames with
 * that timestamp that were already returned. This relies on the read order being by timestamp, which is VLink's
 * reading order (`ORDER BY elapsed, rowid`, and MCAP files written by a VLink writer, whose timestamps never go
 * backwards). With `timeBase: 'publish'` the window applies to publish times, which are not ordered: the backend
 * reads the window by publish time in log order, and resuming skips the frames before the position's log time.
 */
export class QueryCursor {
  private readonly iterator: AsyncGenerator<Frame, void, undefined>;
  private readonly query: MessageQuery;
  private lastT: number;
  private sameT: number;
  private count: number;
  private toSkip: number;
  private peeked: Frame | undefined;
  private done = false;

  constructor(reader: BagReader, query: MessageQuery, from?: Position, signal?: AbortSignal) {
    this.query = query;
    this.lastT = from?.t ?? -1;
    this.sameT = from?.k ?? 0;
    this.count = from?.n ?? 0;
    this.toSkip = from?.k ?? 0;
    const publish = query.timeBase === 'publish';
    const beginUs = publish ? (query.beginUs ?? 0) : Math.max(query.beginUs ?? 0, from?.t ?? 0);
    const options: Parameters<BagReader['frames']>[0] = {};
    if (query.urls) options.filterUrls = query.urls;
    if (publish) options.timeBase = 'publish';
    // Core takes ms and rounds to µs, so µs/1000 is exact; 0 means "open" there, which we handle ourselves below.
    if (beginUs > 0) options.beginTime = beginUs / 1000;
    if (query.endUs !== undefined && query.endUs > 0) options.endTime = query.endUs / 1000;
    if (signal) options.signal = signal;
    this.iterator = reader.frames(options);
  }

  /** The next frame, or undefined at the end. Its `data` is valid until the following call. */
  async next(): Promise<Frame | undefined> {
    const frame = this.peeked ?? (await this.pull());
    this.peeked = undefined;
    if (!frame) return undefined;
    if (frame.timestamp === this.lastT) this.sameT++;
    else {
      this.lastT = frame.timestamp;
      this.sameT = 1;
    }
    this.count++;
    return frame;
  }

  /** Whether another frame follows, without consuming it (the position does not move). */
  async hasMore(): Promise<boolean> {
    this.peeked ??= await this.pull();
    return this.peeked !== undefined;
  }

  position(): Position {
    return { t: Math.max(this.lastT, 0), k: this.sameT, n: this.count };
  }

  async close(): Promise<void> {
    this.done = true;
    this.peeked = undefined;
    await this.iterator.return(undefined);
  }

  private async pull(): Promise<Frame | undefined> {
    const { beginUs, endUs } = this.query;
    const publish = this.query.timeBase === 'publish';
    while (!this.done) {
      const step = await this.iterator.next();
      if (step.done) {
        this.done = true;
        return undefined;
      }
      const frame = step.value;
      const windowTime = publish ? (frame.publishTime ?? frame.timestamp) : frame.timestamp;
      if (beginUs !== undefined && windowTime < beginUs) continue;
      if (endUs !== undefined && windowTime > endUs) continue;
      // A publish window is not a log window: frames before the position's log time were returned already.
      if (publish && frame.timestamp < this.lastT) continue;
      if (this.toSkip > 0 && frame.timestamp === this.lastT) {
        this.toSkip--;
        continue;
      }
      this.toSkip = 0;
      return frame;
    }
    return undefined;
  }
}
