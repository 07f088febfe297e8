import { parseSchemaType, SchemaType } from '@vlink/bag-core';

/**
 * The coarse family (`SchemaType`) of a payload from its message encoding, else its schema encoding, with MCAP's
 * well-known names: `protobuf` → Protobuf, `flatbuffer` → Flatbuffers, `cdr`/`ros2msg`/`ros2idl`/`omgidl` → Cdr,
 * `json`/`jsonschema` → Raw. ROS 1 (`ros1`/`ros1msg`), ULog and anything else have no family: Unknown.
 */
export function familyOf(messageEncoding: string, schemaEncoding = ''): SchemaType {
  const fromMessage = encodingFamily(messageEncoding);
  return fromMessage !== SchemaType.Unknown ? fromMessage : encodingFamily(schemaEncoding);
}

function encodingFamily(encoding: string): SchemaType {
  const name = encoding.trim().toLowerCase();
  if (name === 'jsonschema') return SchemaType.Raw;
  if (name === 'omgidl') return SchemaType.Cdr;
  return parseSchemaType(name);
}
