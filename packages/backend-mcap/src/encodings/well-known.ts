import { SchemaType } from '@vlink/bag-core';
import { familyMessageEncoding } from '@vlink/bag-core/model';

/**
 * MCAP's well-known encoding names (https://mcap.dev/spec/registry) for what vlink-bag stores, shared by the `.vcap`
 * writer (VLink profile) and the plain `.mcap` writer so both declare the same thing for the same data.
 *
 * The registry makes a channel's `message_encoding` mandatory; Foxglove and the official readers decode `ros1`,
 * `cdr`, `protobuf`, `flatbuffer` and `json` and list anything else as an undecodable custom encoding (the registry
 * allows custom strings). So data of a known serialization gets its well-known name, and opaque payloads get an
 * honest custom name (`raw`, `text`, `zerocopy`, `unknown`) instead of the empty string VLink wrote.
 */

/** Schema encodings as spelled by users or VLink → the registry's spelling (`flatbuffers` → `flatbuffer`). */
const SCHEMA_ENCODINGS = new Map<string, string>([
  ['flatbuffers', 'flatbuffer'],
  ['flatbuffer', 'flatbuffer'],
  ['fbs', 'flatbuffer'],
  ['bfbs', 'flatbuffer'],
  ['protobuf', 'protobuf'],
  ['proto', 'protobuf'],
  ['ros1msg', 'ros1msg'],
  ['ros2msg', 'ros2msg'],
  ['ros2idl', 'ros2idl'],
  ['omgidl', 'omgidl'],
  ['jsonschema', 'jsonschema'],
]);

/** The message encoding a schema encoding implies (MCAP registry pairs). */
const MESSAGE_FOR_SCHEMA: Record<string, string> = {
  flatbuffer: 'flatbuffer',
  protobuf: 'protobuf',
  ros1msg: 'ros1',
  ros2msg: 'cdr',
  ros2idl: 'cdr',
  omgidl: 'cdr',
  jsonschema: 'json',
};

/** The registry's spelling of a schema encoding; an unknown one is kept as given (trimmed). */
export function wellKnownSchemaEncoding(encoding: string): string {
  const trimmed = encoding.trim();
  return SCHEMA_ENCODINGS.get(trimmed.toLowerCase()) ?? trimmed;
}

/** True for schema encodings a reader can decode messages with (these get a Schema record). */
export function isDecodableSchemaEncoding(encoding: string): boolean {
  return MESSAGE_FOR_SCHEMA[wellKnownSchemaEncoding(encoding)] !== undefined;
}

/**
 * The channel `message_encoding` for a url: from its schema's encoding when it names a well-known one (`ros1msg` →
 * `ros1`, `ros2msg` → `cdr`, …), else from its family and ser: Protobuf → `protobuf`, Flatbuffers → `flatbuffer`, Cdr →
 * `cdr`, Raw → `json` for JSON sers, `text` for text sers, else `raw`; ZeroCopy → `zerocopy`; Unknown → `unknown`.
 */
export function messageEncodingFor(family: SchemaType, ser: string, schemaEncoding?: string): string {
  const fromSchema = schemaEncoding ? MESSAGE_FOR_SCHEMA[wellKnownSchemaEncoding(schemaEncoding)] : undefined;
  if (fromSchema) return fromSchema;
  if (family === SchemaType.ZeroCopy) return 'zerocopy';
  const implied = familyMessageEncoding(family, ser.trim().toLowerCase());
  if (implied) return implied;
  return family === SchemaType.Raw ? 'raw' : 'unknown';
}
