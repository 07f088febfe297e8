/**
 * ROS 1 bag v2.0 records (wiki.ros.org/Bags/Format/2.0): `header_len u32, header, data_len u32, data`, the header a
 * list of `len u32, name=value` fields. Opcodes and the fields each record type carries.
 */
export enum Op {
  MessageData = 0x02,
  BagHeader = 0x03,
  IndexData = 0x04,
  Chunk = 0x05,
  ChunkInfo = 0x06,
  Connection = 0x07,
}

export const MAGIC = '#ROSBAG V2.0\n';

const decoder = new TextDecoder();
const EQUALS = 0x3d;

/** A record's header fields, values as views into the buffer they were parsed from. */
export type Fields = Map<string, Uint8Array>;

/** Parses `len u32, name=value` fields in [start, end); throws RangeError on a field that runs past the end. */
export function parseFields(bytes: Uint8Array, start: number, end: number): Fields {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const fields: Fields = new Map();
  for (let p = start; p < end; ) {
    if (end - p < 4) throw new RangeError('header field length runs past the header');
    const length = view.getUint32(p, true);
    p += 4;
    if (length > end - p) throw new RangeError('header field runs past the header');
    const field = bytes.subarray(p, p + length);
    const eq = field.indexOf(EQUALS);
    if (eq < 0) throw new RangeError('header field without "="');
    fields.set(decoder.decode(field.subarray(0, eq)), field.subarray(eq + 1));
    p += length;
  }
  return fields;
}

function value(fields: Fields, name: string, size: number): DataView {
  const v = fields.get(name);
  if (!v || v.length < size) throw new RangeError(`header field "${name}" is missing or too short`);
  return new DataView(v.buffer, v.byteOffset, v.length);
}

export function op(fields: Fields): number {
  return value(fields, 'op', 1).getUint8(0);
}
export function u32(fields: Fields, name: string): number {
  return value(fields, name, 4).getUint32(0, true);
}
export function u64(fields: Fields, name: string): number {
  return Number(value(fields, name, 8).getBigUint64(0, true));
}
/** A ROS time: `[sec, nsec]`. */
export function time(fields: Fields, name: string): [number, number] {
  const v = value(fields, name, 8);
  return [v.getUint32(0, true), v.getUint32(4, true)];
}
export function text(fields: Fields, name: string): string | undefined {
  const v = fields.get(name);
  return v === undefined ? undefined : decoder.decode(v);
}
