import type { Readable } from '../io/readable.js';
import { RECORD_PREFIX, TWO_32 } from './constants.js';
import { asBagError } from './corruption.js';
import { RecordCorruption } from './record-parser.js';

const WINDOW = 4 * 1024 * 1024;

/**
 * Sequential access to the records in [start, end) of a readable through one reusable window buffer: the data
 * section of files without chunk indexes, and the linear scan of damaged files. A record larger than the window gets
 * a buffer of its own size, which is bounded by `end` (itself bounded by the file size).
 */
export class RecordWindow {
  buf: Uint8Array;
  view: DataView;
  /** File offset of `buf[0]`. */
  bufStart = 0;
  private bufLen = 0;
  /** File offset of the next record. */
  pos: number;
  /** Buffer index of the record returned by the last `next()`. */
  at = 0;

  /**
   * `file` names the file in errors. `pool` lends a buffer from one window to the next (and receives any bigger one
   * this window allocates).
   */
  constructor(
    private readonly readable: Readable,
    start: number,
    readonly end: number,
    private readonly file: string | undefined,
    private readonly pool?: { buf: Uint8Array },
  ) {
    this.pos = start;
    const want = Math.min(WINDOW, Math.max(64, end - start));
    this.buf = pool && pool.buf.length >= want ? pool.buf : new Uint8Array(want);
    if (pool) pool.buf = this.buf;
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /**
   * Loads the next record: its total length (the record is then at `buf[at..at+length)` and `pos` already points
   * past it), 0 at a clean end, or −1 when the bytes left before `end` hold only part of a record.
   * Throws a `BagError`: `CORRUPT_FILE` (at the record's offset in the file) for a length that cannot be real, and
   * what the readable throws (as `CORRUPT_FILE` when it is no `BagError`), so every caller reports a bad record alike.
   */
  next(): number {
    try {
      return this.load();
    } catch (error) {
      throw asBagError(error, this.file, 0, 'bad record');
    }
  }

  private load(): number {
    const pos = this.pos;
    if (pos >= this.end) return 0;
    if (this.end - pos < RECORD_PREFIX) return -1;
    if (!this.has(pos, RECORD_PREFIX)) this.fill(pos, RECORD_PREFIX);
    let i = pos - this.bufStart;
    const lo = this.view.getUint32(i + 1, true);
    const hi = this.view.getUint32(i + 5, true);
    if (hi > 0x1fffff) throw new RecordCorruption('record length is implausibly large', pos);
    const total = RECORD_PREFIX + hi * TWO_32 + lo;
    if (total > this.end - pos) return -1;
    if (!this.has(pos, total)) {
      this.fill(pos, total);
      i = 0;
    }
    this.at = i;
    this.pos = pos + total;
    return total;
  }

  private has(pos: number, n: number): boolean {
    return pos >= this.bufStart && pos + n <= this.bufStart + this.bufLen;
  }

  private fill(pos: number, need: number): void {
    if (need > this.buf.length) {
      this.buf = new Uint8Array(need);
      this.view = new DataView(this.buf.buffer);
      if (this.pool) this.pool.buf = this.buf;
    }
    const n = Math.min(this.buf.length, this.end - pos);
    this.readable.read(pos, n, this.buf);
    this.bufStart = pos;
    this.bufLen = n;
  }
}
