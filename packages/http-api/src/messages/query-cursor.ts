import type { BagReader, Frame } from '@vlink/bag';
import type { MessageQuery, Position } from './cursor-token.js';
import { framesOptions, readsInTimeOrder } from './read-order.js';

/** The position before the first frame: below any timestamp (log times may be negative in a foreign or hand-made bag). */
const START: Position = { t: -(2 ** 63), k: 0, n: 0 };

/**
 * Reads a query's frames from a position and tracks the position to hand out as the next token. Pages read the
 * frames in the order of the unpaged stream, each exactly once.
 *
 * Resuming a query whose frames come in timestamp order (`readsInTimeOrder`: VLink's `.vdb` order, any monotonic
 * recording) seeks with the backend's own time filter (`beginTime` = the last timestamp) and then skips the frames with
 * that timestamp that were already returned (frames sharing a timestamp are read in a stable order). Any other query
 * (an MCAP file read in file order that goes back in time) resumes from its start and skips the `n` frames already
 * returned: a seek to the last timestamp would lose the later frames that are earlier in time and repeat the earlier
 * ones that are later. With `timeBase: 'publish'` the window applies to publish times: the backend reads it by publish
 * time in log order, and an ordered resume skips the frames before the position's log time.
 */
export class QueryCursor {
  private iterator: AsyncGenerator<Frame, void, undefined> | undefined;
  private readonly from: Position;
  private lastT: number;
  private sameT: number;
  private count: number;
  /** Ordered resume: frames before this log time were returned already. */
  private floorT = Number.NEGATIVE_INFINITY;
  /** Ordered resume: frames at `floorT` still to skip; unordered resume: frames from the start still to skip. */
  private toSkip = 0;
  private skipAll = false;
  private peeked: Frame | undefined;
  private done = false;

  constructor(
    private readonly reader: BagReader,
    private readonly query: MessageQuery,
    from?: Position,
    private readonly signal?: AbortSignal,
  ) {
    this.from = from ?? START;
    this.lastT = this.from.t;
    this.sameT = this.from.k;
    this.count = this.from.n;
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
    return { t: this.lastT, k: this.sameT, n: this.count };
  }

  async close(): Promise<void> {
    this.done = true;
    this.peeked = undefined;
    await this.iterator?.return(undefined);
  }

  /** Opens the backend's cursor on the first read: where depends on the query's read order. */
  private async open(): Promise<AsyncGenerator<Frame, void, undefined>> {
    const from = this.from;
    if (from.n === 0) return this.reader.frames(framesOptions(this.query, undefined, this.signal));
    if (await readsInTimeOrder(this.reader, this.query, this.signal)) {
      this.floorT = from.t;
      this.toSkip = from.k;
      return this.reader.frames(framesOptions(this.query, from.t, this.signal));
    }
    this.toSkip = from.n;
    this.skipAll = true;
    return this.reader.frames(framesOptions(this.query, undefined, this.signal));
  }

  private async pull(): Promise<Frame | undefined> {
    const { beginUs, endUs } = this.query;
    const publish = this.query.timeBase === 'publish';
    if (!this.iterator) {
      const opened = await this.open();
      // Closed while the read order was being found out: nothing else would end this cursor.
      if (this.done) await opened.return(undefined);
      this.iterator = opened;
    }
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
      if (this.skipAll) {
        // Unordered resume: the first `n` frames of the query were returned already.
        if (this.toSkip > 0) {
          this.toSkip--;
          continue;
        }
        return frame;
      }
      // Ordered resume: a seek at or below 0 is no seek (core's 0 means open), and a publish window is not a log
      // window, so the frames before the position's log time are skipped here.
      if (frame.timestamp < this.floorT) continue;
      if (this.toSkip > 0 && frame.timestamp === this.floorT) {
        this.toSkip--;
        continue;
      }
      this.toSkip = 0;
      return frame;
    }
    return undefined;
  }
}
