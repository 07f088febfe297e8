import type { Readable } from '@vlink/bag-mcap';
import { findSyncEnd, isDamagedHeader, isKnownType } from './ulog-sync.js';

/** Read ahead this much per file read (a ULog message is at most 64 KiB + 3). */
const WINDOW = 1 << 20;

/**
 * Sequential ULog messages (`uint16 size, uint8 type`, then `size` bytes) through a read-ahead window, without an
 * object per message: after `next()` returns true, `type`, `offset` and the body `buf[start, end)` describe the
 * message until the next call. Stops at the end of the file, or with `truncatedAt` set where the last message runs
 * past it. Appended data (flag bits) is followed: reaching an appended offset jumps to it. Damage is stepped over as
 * pyulog does, and each stretch of skipped bytes is kept in `skipped`: after a header that cannot be one the cursor
 * resumes after the next sync message (else byte by byte), and a sync message inside an unknown message's body
 * means the messages resume there.
 */
export class UlogCursor {
  type = 0;
  offset = 0;
  start = 0;
  end = 0;
  buf: Uint8Array = new Uint8Array(0);
  view: DataView = new DataView(new ArrayBuffer(0));
  /** Where a message that runs past the end of the file starts. */
  truncatedAt: number | undefined;
  /** The damaged stretches stepped over, [from, to) file offsets, adjacent ones merged. */
  readonly skipped: Array<{ from: number; to: number }> = [];

  /** The reused read buffer; `buf` is a view of it. */
  private backing = new Uint8Array(0);
  private windowStart = 0;
  private windowEnd = 0;
  private pos: number;
  private readonly size: number;
  private readonly appended: number[];
  /** pyulog's `_has_sync`: false once a search found no sync message up to the end, so as not to search again. */
  private hasSync = true;

  constructor(
    private readonly readable: Readable,
    from: number,
    appendedOffsets: readonly number[] = [],
  ) {
    this.pos = from;
    this.size = readable.size();
    this.appended = appendedOffsets.filter((o) => o > from && o < this.size).sort((a, b) => a - b);
  }

  next(): boolean {
    for (;;) {
      const jump = this.appended[0];
      if (jump !== undefined && this.pos + 3 > jump) {
        this.pos = jump;
        this.appended.shift();
      }
      if (this.pos + 3 > this.size) {
        if (this.pos < this.size) this.truncatedAt = this.pos;
        return false;
      }
      if (!this.ensure(this.pos, 3)) return false;
      const at = this.pos - this.windowStart;
      const length = this.buf[at]! | (this.buf[at + 1]! << 8);
      const type = this.buf[at + 2]!;
      const total = 3 + length;
      if (jump !== undefined && this.pos + total > jump) {
        // Cut off by the start of appended data (a message the logger never finished): continue there.
        this.pos = jump;
        this.appended.shift();
        continue;
      }
      if (isDamagedHeader(type, length)) {
        this.resync(jump);
        continue;
      }
      if (!isKnownType(type) && this.hasSync) {
        const sync = findSyncEnd(this.readable, this.pos + 3, Math.min(this.pos + total, this.size));
        if (sync !== undefined) {
          this.skip(this.pos, sync);
          continue;
        }
      }
      if (this.pos + total > this.size || !this.ensure(this.pos, total)) {
        this.truncatedAt = this.pos;
        return false;
      }
      this.type = type;
      this.offset = this.pos;
      this.start = this.pos - this.windowStart + 3;
      this.end = this.start + length;
      this.pos += total;
      return true;
    }
  }

  /**
   * After a damaged header: on at the end of the next sync message, or at the appended data when that comes first;
   * a log without a sync message after this point is walked a byte at a time (pyulog's recovery, so that both read
   * the same samples from a damaged log).
   */
  private resync(jump: number | undefined): void {
    const sync = this.hasSync ? findSyncEnd(this.readable, this.pos + 1) : undefined;
    if (sync === undefined) this.hasSync = false;
    this.skip(this.pos, sync === undefined ? this.pos + 1 : jump !== undefined && sync > jump ? jump : sync);
  }

  private skip(from: number, to: number): void {
    const last = this.skipped.at(-1);
    if (last?.to === from) last.to = to;
    else this.skipped.push({ from, to });
    this.pos = to;
  }

  /** Makes [at, at + length) part of the window; false when the file is shorter. */
  private ensure(at: number, length: number): boolean {
    if (at >= this.windowStart && at + length <= this.windowEnd) return true;
    if (at + length > this.size) return false;
    const size = Math.min(Math.max(WINDOW, length), this.size - at);
    if (this.backing.length < size) this.backing = new Uint8Array(Math.max(size, WINDOW));
    this.buf = this.readable.read(at, size, this.backing);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.windowStart = at;
    this.windowEnd = at + size;
    return true;
  }
}
