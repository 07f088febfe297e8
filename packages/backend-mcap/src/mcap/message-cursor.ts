import type { Readable } from '../io/readable.js';
import { joinTime, type Block } from './blocks.js';
import { chunkRecordLength, type ChunkLoader, type ChunkRecords } from './chunk-loader.js';
import { MESSAGE_FIXED, Opcode, RECORD_PREFIX } from './constants.js';
import { corrupt } from './corruption.js';
import type { MessageFilter } from './message-filter.js';
import { RecordWindow } from './record-window.js';

export type { MessageQuery } from './message-filter.js';

/** The current message of a cursor: what `next()` fills in. */
export interface MessageFields {
  channelId: number;
  sequence: number;
  /** Log time (ns since the epoch) as two 32-bit halves; `logTime` joins them. */
  timeHi: number;
  timeLo: number;
  publishHi: number;
  publishLo: number;
  /** The payload: a view valid until the cursor's next step. */
  data: Uint8Array;
}

/** A pull-style cursor over messages: after `next()` returns true its fields describe the current message. */
export interface MessageStream extends MessageFields {
  readonly logTime: bigint;
  readonly publishTime: bigint;
  next(): boolean;
}

/** The fields every cursor fills in, and their times as bigints: what the file-order and log-time cursors share. */
export abstract class CursorFields implements MessageStream {
  channelId = 0;
  sequence = 0;
  timeHi = 0;
  timeLo = 0;
  publishHi = 0;
  publishLo = 0;
  data: Uint8Array = new Uint8Array(0);

  get logTime(): bigint {
    return joinTime(this.timeHi, this.timeLo);
  }
  get publishTime(): bigint {
    return joinTime(this.publishHi, this.publishLo);
  }

  abstract next(): boolean;
}

/**
 * Pull-style iteration over messages in file order (blocks by offset, records in order inside each block), with no
 * allocation per message: after `next()` returns true the fields describe the current message and `data` is a view
 * into the chunk or window buffer, valid until the next call. 64-bit times are kept as 32-bit halves.
 */
export class MessageCursor extends CursorFields {
  private readonly blocks: Block[];
  private blockIndex = 0;
  private readonly flags: Uint8Array | undefined;
  private readonly sHi: number;
  private readonly sLo: number;
  private readonly eHi: number;
  private readonly eLo: number;
  private readonly windowBuf = { buf: new Uint8Array(0) };

  private mode = 0; // 0 between blocks, 1 inside chunk records, 2 inside a span
  private bytes: Uint8Array = new Uint8Array(0);
  private view: DataView = new DataView(new ArrayBuffer(0));
  private pos = 0;
  private end = 0;
  private blockOffset = 0;
  private window: RecordWindow | undefined;

  constructor(
    private readonly readable: Readable,
    private readonly loader: ChunkLoader,
    blocks: readonly Block[],
    filter: MessageFilter,
    private readonly file: string | undefined,
  ) {
    super();
    // Copied into fields of their own: `accept` runs per message.
    this.flags = filter.flags;
    this.sHi = filter.sHi;
    this.sLo = filter.sLo;
    this.eHi = filter.eHi;
    this.eLo = filter.eLo;
    this.blocks = blocks.filter((b) => filter.wants(b));
  }

  next(): boolean {
    for (;;) {
      if (this.mode === 1) {
        if (this.nextInChunk()) return true;
      } else if (this.mode === 2) {
        if (this.nextInSpan()) return true;
      }
      if (this.blockIndex >= this.blocks.length) return false;
      this.openBlock(this.blocks[this.blockIndex++]!);
    }
  }

  /**
   * Goes through the records of a chunk its caller loaded (with this cursor's loader, whose buffer they are), then on
   * to the cursor's blocks: the log-time cursor looks into a chunk before it picks how to read it.
   */
  startChunk(records: ChunkRecords, offset: number): void {
    this.blockOffset = offset;
    this.bytes = records.bytes;
    this.view = records.view;
    this.pos = records.start;
    this.end = records.end;
    this.mode = 1;
  }

  private openBlock(b: Block): void {
    if (b.kind === 'chunk') this.startChunk(this.loader.loadBlock(b), b.offset);
    else {
      this.blockOffset = b.offset;
      this.window = new RecordWindow(this.readable, b.offset, b.offset + b.length, this.file, this.windowBuf);
      this.mode = 2;
    }
  }

  private nextInChunk(): boolean {
    const bytes = this.bytes;
    const v = this.view;
    const end = this.end;
    let pos = this.pos;
    while (pos < end) {
      const rec = pos;
      pos += chunkRecordLength(bytes, v, rec, end, this.file, this.blockOffset);
      if (bytes[rec] !== Opcode.Message) continue;
      if (this.accept(v, rec)) {
        this.data = bytes.subarray(rec + 31, pos);
        this.pos = pos;
        return true;
      }
    }
    this.pos = pos;
    this.mode = 0;
    return false;
  }

  private nextInSpan(): boolean {
    const w = this.window!;
    for (;;) {
      const at = w.pos;
      const len = w.next();
      if (len === 0) break;
      if (len < 0) throw corrupt('data section ends in the middle of a record', this.file, at);
      const i = w.at;
      const op = w.buf[i]!;
      if (op === Opcode.DataEnd || op === Opcode.Footer) break;
      if (op !== Opcode.Message) continue;
      if (len < RECORD_PREFIX + MESSAGE_FIXED) throw corrupt('message record is too short', this.file, at);
      if (this.accept(w.view, i)) {
        this.data = w.buf.subarray(i + 31, i + len);
        return true;
      }
    }
    this.mode = 0;
    this.window = undefined;
    return false;
  }

  /** Applies the channel and time filters to the message record at `rec` and, when it passes, loads its fields. */
  private accept(v: DataView, rec: number): boolean {
    const cid = v.getUint16(rec + 9, true);
    if (this.flags && this.flags[cid] !== 1) return false;
    const lo = v.getUint32(rec + 15, true);
    const hi = v.getUint32(rec + 19, true);
    if (hi < this.sHi || (hi === this.sHi && lo < this.sLo)) return false;
    if (hi > this.eHi || (hi === this.eHi && lo > this.eLo)) return false;
    this.channelId = cid;
    this.sequence = v.getUint32(rec + 11, true);
    this.timeLo = lo;
    this.timeHi = hi;
    this.publishLo = v.getUint32(rec + 23, true);
    this.publishHi = v.getUint32(rec + 27, true);
    return true;
  }
}
