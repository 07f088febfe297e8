/** Coarse serialization family of a url (VLink `SchemaType`, format reference §10.1). Integer values are VLink's. */
export enum SchemaType {
  Unknown = 0,
  Raw = 1,
  ZeroCopy = 2,
  Protobuf = 3,
  Flatbuffers = 4,
  /** VLink's `kCdr`; its text label is not determinable from VLink's sources, we write `cdr` (ROS 2's encoding). */
  Cdr = 5,
}

const LABELS: Record<SchemaType, string> = {
  [SchemaType.Unknown]: '',
  [SchemaType.Raw]: 'raw',
  [SchemaType.ZeroCopy]: 'zerocopy',
  [SchemaType.Protobuf]: 'protobuf',
  [SchemaType.Flatbuffers]: 'flatbuffers',
  [SchemaType.Cdr]: 'cdr',
};

const ACCEPTED = new Map<string, SchemaType>([
  ...['raw', 'json', 'text', 'blob', 'string', 'std::string', 'application/json', 'text/json'].map(
    (s) => [s, SchemaType.Raw] as const,
  ),
  ['zerocopy', SchemaType.ZeroCopy],
  ['vlink_msg', SchemaType.ZeroCopy],
  ['protobuf', SchemaType.Protobuf],
  ['proto', SchemaType.Protobuf],
  ...['flatbuffers', 'flatbuffer', 'fbs', 'bfbs'].map((s) => [s, SchemaType.Flatbuffers] as const),
  // Our choice for kCdr (not determinable from VLink): ROS 2 and MCAP spell it `cdr`, also accept `ros2msg`/`ros2idl`.
  ['cdr', SchemaType.Cdr],
  ['ros2msg', SchemaType.Cdr],
  ['ros2idl', SchemaType.Cdr],
]);

const RAW_SER_NAMES = new Set(['raw', 'string', 'std::string', 'text', 'json', 'application/json', 'text/json']);

/** Text label written to files (`convert_type`). */
export function schemaTypeLabel(type: SchemaType): string {
  return LABELS[type] ?? '';
}

/** Parses an encoding label, trimmed and ASCII case-insensitive (`convert_encoding`). */
export function parseSchemaType(encoding: string | null | undefined): SchemaType {
  if (!encoding) return SchemaType.Unknown;
  return ACCEPTED.get(encoding.trim().toLowerCase()) ?? SchemaType.Unknown;
}

export function isValidSchemaType(type: number): type is SchemaType {
  return Number.isInteger(type) && type >= SchemaType.Unknown && type <= SchemaType.Cdr;
}

/** Protobuf and flatbuffers (and zerocopy) carry a real schema (`is_real_type`). */
export function isRealSchemaType(type: SchemaType): boolean {
  return type === SchemaType.Protobuf || type === SchemaType.Flatbuffers || type === SchemaType.ZeroCopy;
}

/** Guesses a family from the ser name alone; protobuf and flatbuffers are never guessed (`infer_ser_type`). */
export function inferSchemaType(ser: string | null | undefined): SchemaType {
  if (!ser) return SchemaType.Unknown;
  if (ser.startsWith('vlink::zerocopy::')) return SchemaType.ZeroCopy;
  return RAW_SER_NAMES.has(ser) ? SchemaType.Raw : SchemaType.Unknown;
}

/** VLink sers that mean "this payload is JSON text" / "is plain text" (Raw flavours). */
const JSON_SERS = new Set(['json', 'application/json', 'text/json']);
const TEXT_SERS = new Set(['text', 'string', 'std::string']);

/**
 * The MCAP well-known message encoding a VLink family and ser imply, where they imply one: Protobuf → `protobuf`,
 * Flatbuffers → `flatbuffer`, Cdr → `cdr`, else a JSON ser → `json`, a text ser → `text` (ser compared as given);
 * undefined for the rest. The one rule the `.vcap`/`.mcap` writers (what a channel declares) and the payload decoder
 * (what a payload is read as) share, so the two cannot disagree; each adds its own answer for the rest.
 */
export function familyMessageEncoding(
  family: SchemaType,
  ser: string,
): 'protobuf' | 'flatbuffer' | 'cdr' | 'json' | 'text' | undefined {
  switch (family) {
    case SchemaType.Protobuf:
      return 'protobuf';
    case SchemaType.Flatbuffers:
      return 'flatbuffer';
    case SchemaType.Cdr:
      return 'cdr';
  }
  return JSON_SERS.has(ser) ? 'json' : TEXT_SERS.has(ser) ? 'text' : undefined;
}

/** Explicit valid value wins, then the encoding label, then a guess from the ser name (`resolve_type`). */
export function resolveSchemaType(explicit: SchemaType | undefined, ser: string, encoding?: string): SchemaType {
  if (explicit !== undefined && explicit !== SchemaType.Unknown && isValidSchemaType(explicit)) return explicit;
  const fromEncoding = parseSchemaType(encoding);
  if (fromEncoding !== SchemaType.Unknown) return fromEncoding;
  return inferSchemaType(ser);
}
