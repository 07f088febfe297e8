import { CdrReader as CdrByteReader } from '@foxglove/cdr';
import { parseIDL } from '@foxglove/omgidl-parser';
import { MessageReader as OmgIdlReader } from '@foxglove/omgidl-serialization';
import { parseRos2idl } from '@foxglove/ros2idl-parser';
import { parse as parseRosmsg } from '@foxglove/rosmsg';
import { MessageReader as Ros1Reader, StandardTypeReader } from '@foxglove/rosmsg-serialization';
import { MessageReader as CdrReader } from '@foxglove/rosmsg2-serialization';
import { serviceEventDefinition } from './service-event.js';

/** Something that turns one payload into a value; built once per (schema, encoding) and cached by the decoder. */
export interface MessageDecoder {
  decode(data: Uint8Array): unknown;
}

/**
 * A payload longer than what its definition describes was written with another definition (a newer message version,
 * the wrong type): decoding its first bytes gives a value that looks right and is not, so it is refused instead.
 */
class LeftOverBytesError extends Error {
  constructor(type: string, read: number, size: number) {
    super(`the definition of ${type || 'the payload'} describes ${read} of its ${size} bytes`);
  }
}

/**
 * ROS 1 payloads through their `ros1msg` schema (the full definition text, as bags store it), by
 * `@foxglove/rosmsg` + `@foxglove/rosmsg-serialization`. Times are `{sec, nsec}`. ROS 1 serialization has no
 * padding: a payload must end where its definition does.
 */
export function ros1Decoder(type: string, definition: string): MessageDecoder {
  const { reader: Message } = new Ros1Reader(parseRosmsg(definition));
  return {
    decode(data) {
      const reader = new StandardTypeReader(data);
      const value = new Message(reader);
      if (reader.offset !== data.byteLength) throw new LeftOverBytesError(type, reader.offset, data.byteLength);
      return value;
    },
  };
}

/**
 * At most this many bytes may follow the last field of a CDR payload: DDS pads a serialized payload to a multiple
 * of 4 bytes.
 */
const CDR_PADDING = 3;

/**
 * The definitions of a `ros2idl` schema with the type's own struct first, where the reader looks for the root: an IDL
 * file may define the structs it uses before the one it is about (`struct Sub` before `struct Thing`), and read from
 * the first struct every payload would be decoded as `Sub`. Names compare as `pkg/msg/Type` (the parser's) whether
 * the schema says `pkg/msg/Type` or `pkg::msg::Type`.
 */
function rootFirst<D extends { name?: string }>(definitions: D[], type: string): D[] {
  const name = type.replaceAll('::', '/');
  const root = definitions.findIndex((d) => d.name === name);
  return root <= 0 ? definitions : [definitions[root]!, ...definitions.filter((_, i) => i !== root)];
}

/**
 * CDR payloads through a `ros2msg` (concatenated .msg text, as rosbag2 and MCAP store it) or `ros2idl` schema, by
 * `@foxglove/rosmsg2-serialization`. Times are `{sec, nanosec}` as in ROS 2. A service event type (`pkg/srv/X_Event`)
 * whose schema is the service's own text, as rosbag2 records it, is decoded as the event message it is.
 */
export function cdrDecoder(type: string, schemaEncoding: string, definition: string): MessageDecoder {
  if (schemaEncoding === 'omgidl') return omgIdlDecoder(type, definition);
  const definitions: ReturnType<typeof parseRosmsg> =
    schemaEncoding === 'ros2idl'
      ? rootFirst(parseRos2idl(definition) as unknown as ReturnType<typeof parseRosmsg>, type)
      : parseRosmsg(serviceEventDefinition(type, definition) ?? definition, { ros2: true });
  const reader = new CdrReader(definitions);
  return {
    decode(data) {
      const value = reader.readMessage(data);
      const read = reader.lastReadByteLength();
      if (data.byteLength - read > CDR_PADDING) throw new LeftOverBytesError(type, read, data.byteLength);
      return value;
    },
  };
}

/**
 * What `readMessage` of `@foxglove/omgidl-serialization`'s MessageReader does with the CDR reader it makes: a method
 * its types call private, and the root type it was built for.
 */
interface OmgIdlReaderInternals {
  rootDefinition: unknown;
  readAggregatedType(
    definition: unknown,
    reader: CdrByteReader,
    options: { usesDelimiterHeader: boolean; usesMemberHeader: boolean },
  ): unknown;
}

/**
 * CDR payloads through an `omgidl` schema (OMG IDL, MCAP's well-known encoding for DDS types: the schema name is the
 * root type, `pkg::Type`), by `@foxglove/omgidl-parser` + `@foxglove/omgidl-serialization`, what Foxglove decodes
 * them with: CDR and XCDR2 (delimited and parameter-list types), unions, enums, bounded and nested sequences.
 *
 * `readMessage` makes its own `CdrReader` and drops it, and with it how many bytes it read, which the left-over check
 * needs (the same check as `cdrDecoder`'s). So the message is read as `readMessage` reads it, by the method it calls,
 * with a reader kept here. Where a later version of the library lacks that method, payloads are still decoded, by
 * `readMessage`, without the check (ros-decoders.test.ts then fails, so an upgrade that loses it is noticed).
 */
function omgIdlDecoder(type: string, definition: string): MessageDecoder {
  const reader = new OmgIdlReader(type, parseIDL(definition));
  const internals = reader as unknown as Partial<OmgIdlReaderInternals>;
  const readAggregatedType = internals.readAggregatedType;
  const root = internals.rootDefinition;
  if (typeof readAggregatedType !== 'function' || root === undefined)
    return { decode: (data) => reader.readMessage(data) };
  return {
    decode(data) {
      const cdr = new CdrByteReader(data);
      const { usesDelimiterHeader, usesMemberHeader } = cdr;
      const value = readAggregatedType.call(reader, root, cdr, { usesDelimiterHeader, usesMemberHeader });
      const read = cdr.decodedBytes;
      if (data.byteLength - read > CDR_PADDING) throw new LeftOverBytesError(type, read, data.byteLength);
      return value;
    },
  };
}
