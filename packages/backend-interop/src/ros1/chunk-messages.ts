import { corrupt } from '../common/errors.js';
import { Op } from './records.js';

/**
 * The smallest message record: header length (4), the `op`, `conn` and `time` fields (4 + 4, 4 + 9, 4 + 13), data
 * length (4). A chunk of n bytes holds at most n / 46 messages, whatever its index claims.
 */
const MIN_MESSAGE_RECORD = 46;

const O = 0x6f;
const P = 0x70;
const EQ = 0x3d;

/**
 * The message records of one decompressed chunk, as parallel arrays (no object per message): connection, time and
 * payload range, in log-time order (file order for ties; a chunk written out of order is sorted). Header fields
 * are matched by their bytes (`op=`, `conn=`, `time=`), not decoded as text: this is the per-message hot path.
 */
export class ChunkMessages {
  readonly count: number;
  readonly conn: Uint32Array;
  readonly sec: Uint32Array;
  readonly nsec: Uint32Array;
  readonly start: Uint32Array;
  readonly end: Uint32Array;
  /** Indexes in log-time order. */
  readonly order: Uint32Array;

  constructor(
    readonly bytes: Uint8Array,
    expected: number,
    file: string,
    readonly chunkOffset: number,
  ) {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    // The index's count (`expected`) sizes the arrays, bounded by what the bytes can hold: a damaged count must not
    // allocate gigabytes (a flipped bit of a ROS 1 chunk info asked for 40 GiB, fuzz foreign seed 64 case 849).
    const most = Math.floor(bytes.length / MIN_MESSAGE_RECORD) + 1;
    let capacity = Number.isFinite(expected) ? Math.max(16, Math.min(expected, most)) : 16;
    let conn = new Uint32Array(capacity);
    let sec = new Uint32Array(capacity);
    let nsec = new Uint32Array(capacity);
    let start = new Uint32Array(capacity);
    let end = new Uint32Array(capacity);
    let n = 0;
    let sorted = true;
    const length = bytes.length;
    for (let p = 0; p < length; ) {
      if (length - p < 8) throw corrupt('chunk ends in the middle of a record', file, chunkOffset);
      const headerLength = view.getUint32(p, true);
      const headerEnd = p + 4 + headerLength;
      if (headerEnd + 4 > length) throw corrupt('record header runs past its chunk', file, chunkOffset);
      let kind = -1;
      let c = -1;
      let s = 0;
      let ns = 0;
      let hasTime = false;
      for (let f = p + 4; f < headerEnd; ) {
        if (headerEnd - f < 4) throw corrupt('record header field runs past its header', file, chunkOffset);
        const fieldLength = view.getUint32(f, true);
        const at = f + 4;
        if (fieldLength > headerEnd - at) throw corrupt('record header field runs past its header', file, chunkOffset);
        if (fieldLength === 4 && bytes[at] === O && bytes[at + 1] === P && bytes[at + 2] === EQ) kind = bytes[at + 3]!;
        else if (fieldLength === 9 && isName(bytes, at, CONN)) c = view.getUint32(at + 5, true);
        else if (fieldLength === 13 && isName(bytes, at, TIME)) {
          s = view.getUint32(at + 5, true);
          ns = view.getUint32(at + 9, true);
          hasTime = true;
        }
        f = at + fieldLength;
      }
      const dataLength = view.getUint32(headerEnd, true);
      const dataStart = headerEnd + 4;
      const dataEnd = dataStart + dataLength;
      if (dataEnd > length) throw corrupt('record data runs past its chunk', file, chunkOffset);
      if (kind === Op.MessageData) {
        if (c < 0 || !hasTime) throw corrupt('message record without conn or time', file, chunkOffset);
        if (n === capacity) {
          capacity *= 2;
          conn = grow(conn, capacity);
          sec = grow(sec, capacity);
          nsec = grow(nsec, capacity);
          start = grow(start, capacity);
          end = grow(end, capacity);
        }
        if (n > 0 && (s < sec[n - 1]! || (s === sec[n - 1] && ns < nsec[n - 1]!))) sorted = false;
        conn[n] = c;
        sec[n] = s;
        nsec[n] = ns;
        start[n] = dataStart;
        end[n] = dataEnd;
        n++;
      } else if (kind !== Op.Connection) {
        throw corrupt(`unexpected record op ${kind} inside a chunk`, file, chunkOffset);
      }
      p = dataEnd;
    }
    this.count = n;
    this.conn = conn;
    this.sec = sec;
    this.nsec = nsec;
    this.start = start;
    this.end = end;
    const order = new Uint32Array(n);
    for (let i = 0; i < n; i++) order[i] = i;
    if (!sorted) order.sort((a, b) => sec[a]! - sec[b]! || nsec[a]! - nsec[b]! || a - b);
    this.order = order;
  }
}

const CONN = [0x63, 0x6f, 0x6e, 0x6e, EQ];
const TIME = [0x74, 0x69, 0x6d, 0x65, EQ];

function isName(bytes: Uint8Array, at: number, name: readonly number[]): boolean {
  for (let i = 0; i < name.length; i++) if (bytes[at + i] !== name[i]) return false;
  return true;
}

function grow(array: Uint32Array, capacity: number): Uint32Array<ArrayBuffer> {
  const out = new Uint32Array(capacity);
  out.set(array);
  return out;
}
