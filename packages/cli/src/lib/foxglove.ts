import { parseSchemaType, SchemaType } from '@vlink/bag';

/** The Foxglove WebSocket subprotocol both sides speak. */
export const FOXGLOVE_SUBPROTOCOL = 'foxglove.websocket.v1';

/**
 * Message encoding → VLink family, for `record --from` (the inverse of `@vlink/bag-decode`'s `foxgloveChannels`,
 * which `play --serve` advertises, so `play --serve` → `record --from` keeps each url's family and ser): protobuf → Protobuf, json → Raw, flatbuffer → Flatbuffers,
 * cdr/ros2msg → Cdr; anything else by VLink's own labels (`raw`, `zerocopy`, …), else Unknown.
 */
export function schemaTypeOfEncoding(encoding: string): SchemaType {
  switch (encoding.trim().toLowerCase()) {
    case 'protobuf':
      return SchemaType.Protobuf;
    case 'json':
      return SchemaType.Raw;
    case 'flatbuffer':
    case 'flatbuffers':
      return SchemaType.Flatbuffers;
    case 'cdr':
    case 'ros2msg':
    case 'ros2idl':
      return SchemaType.Cdr;
    default:
      return parseSchemaType(encoding);
  }
}

/** Schemas VLink embeds (protobuf FileDescriptorSets, flatbuffers bfbs) travel base64-encoded in a channel. */
export function embedsBinarySchema(type: SchemaType): boolean {
  return type === SchemaType.Protobuf || type === SchemaType.Flatbuffers;
}
