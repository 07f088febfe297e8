import { parse } from '@foxglove/rosmsg';
import type { Frame } from '@vlink/bag-core';
import type { TimeBase } from './time-base.js';

/**
 * Whether a message definition's first field is a `std_msgs/Header` (parsed with `@foxglove/rosmsg`): then its
 * stamp (and ROS 1 seq) sit at fixed offsets of every payload, so the readers expose them without decoding.
 */
export function startsWithHeader(definition: string, ros2: boolean): boolean {
  if (!definition) return false;
  try {
    const first = parse(definition, { ros2 })[0]?.definitions.find((field) => !field.isConstant);
    return (
      first !== undefined &&
      first.isComplex === true &&
      first.isArray !== true &&
      (first.type === 'std_msgs/Header' || first.type === 'std_msgs/msg/Header')
    );
  } catch {
    return false; // a definition the parser rejects: no header times, the payload is still read
  }
}

/**
 * ROS 1: `uint32 seq; time stamp (uint32 sec, uint32 nsec)` little-endian at the start of the payload → the
 * frame's `sequence` and `publishTime`. Payloads too short for a header are left without.
 */
export function applyRos1Header(frame: Frame, data: Uint8Array, base: TimeBase): void {
  if (data.length < 12) {
    frame.publishTime = undefined;
    frame.sequence = undefined;
    return;
  }
  const view = new DataView(data.buffer, data.byteOffset, 12);
  frame.sequence = view.getUint32(0, true);
  frame.publishTime = base.usFromSecNsec(view.getUint32(4, true), view.getUint32(8, true));
}

/**
 * ROS 2 CDR: a 4-byte encapsulation header (byte 1 odd = little-endian), then `int32 sec; uint32 nanosec` → the
 * frame's `publishTime`.
 */
export function applyCdrHeader(frame: Frame, data: Uint8Array, base: TimeBase): void {
  if (data.length < 12) {
    frame.publishTime = undefined;
    return;
  }
  const view = new DataView(data.buffer, data.byteOffset, 12);
  const little = (data[1]! & 1) === 1;
  frame.publishTime = base.usFromSecNsec(view.getInt32(4, little), view.getUint32(8, little));
}
