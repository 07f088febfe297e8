import { parseRos2idl } from '@foxglove/ros2idl-parser';
import { parse as parseRosmsg } from '@foxglove/rosmsg';
import { MessageReader as Ros1Reader } from '@foxglove/rosmsg-serialization';
import { MessageReader as CdrReader } from '@foxglove/rosmsg2-serialization';

/** Something that turns one payload into a value; built once per (schema, encoding) and cached by the decoder. */
export interface MessageDecoder {
  decode(data: Uint8Array): unknown;
}

/**
 * ROS 1 payloads through their `ros1msg` schema (the full definition text, as bags store it), by
 * `@foxglove/rosmsg` + `@foxglove/rosmsg-serialization`. Times are `{sec, nsec}`.
 */
export function ros1Decoder(definition: string): MessageDecoder {
  const reader = new Ros1Reader(parseRosmsg(definition));
  return { decode: (data) => reader.readMessage(data) };
}

/**
 * CDR payloads through a `ros2msg` (concatenated .msg text, as rosbag2 and MCAP store it) or `ros2idl` schema, by
 * `@foxglove/rosmsg2-serialization`. Times are `{sec, nanosec}` as in ROS 2.
 */
export function cdrDecoder(schemaEncoding: string, definition: string): MessageDecoder {
  const definitions: ReturnType<typeof parseRosmsg> =
    schemaEncoding === 'ros2idl'
      ? (parseRos2idl(definition) as unknown as ReturnType<typeof parseRosmsg>)
      : parseRosmsg(definition, { ros2: true });
  const reader = new CdrReader(definitions);
  return { decode: (data) => reader.readMessage(data) };
}
