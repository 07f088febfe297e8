import { familyMessageEncoding, SchemaType } from '@vlink/bag-core/model';

/**
 * The payload encodings the decoder knows, by MCAP's well-known message-encoding names (`flatbuffer`, not VLink's
 * older `flatbuffers`), plus `ulog` (PX4) and two VLink Raw flavours: `text` (a ser of `text`/`string`) and `raw`.
 */
export type PayloadEncoding = 'protobuf' | 'json' | 'cbor' | 'ros1' | 'cdr' | 'ulog' | 'flatbuffer' | 'text' | 'raw';

const ALIASES = new Map<string, PayloadEncoding>([
  ['protobuf', 'protobuf'],
  ['proto', 'protobuf'],
  ['json', 'json'],
  ['application/json', 'json'],
  ['text/json', 'json'],
  ['cbor', 'cbor'],
  ['application/cbor', 'cbor'],
  ['ros1', 'ros1'],
  ['cdr', 'cdr'],
  ['ros2msg', 'cdr'],
  ['ros2idl', 'cdr'],
  ['ulog', 'ulog'],
  ['flatbuffer', 'flatbuffer'],
  ['flatbuffers', 'flatbuffer'],
]);

/**
 * A channel's declared message encoding under its well-known name, or undefined when it is empty (VLink's old RPC
 * channels) or one the decoder does not know (then the VLink family decides). Trimmed, ASCII case-insensitive.
 */
export function wellKnownEncoding(encoding: string | undefined): PayloadEncoding | undefined {
  if (!encoding) return undefined;
  return ALIASES.get(encoding.trim().toLowerCase());
}

/**
 * The encoding of a payload: the channel's declared one when known, else from the VLink family and the ser (which
 * for RPC urls is already the request or response half): Protobuf → protobuf, Flatbuffers → flatbuffer, Cdr → cdr,
 * Raw or untyped with a JSON ser → json, with a text ser → text, other Raw → raw; undefined for the rest.
 */
export function payloadEncoding(
  declared: string | undefined,
  schemaType: number,
  ser: string,
): PayloadEncoding | undefined {
  const known = wellKnownEncoding(declared) ?? familyMessageEncoding(schemaType, ser);
  if (known) return known;
  return schemaType === SchemaType.Raw ? 'raw' : undefined;
}
