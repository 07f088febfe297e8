import type { Channel } from '@foxglove/ws-protocol';
import {
  ActionType,
  parseSchemaType,
  SchemaType,
  schemaTypeLabel,
  serForAction,
  type Info,
  type SchemaData,
} from '@vlink/bag';
import { toBase64 } from './ndjson.js';

/** The Foxglove WebSocket subprotocol both sides speak. */
export const FOXGLOVE_SUBPROTOCOL = 'foxglove.websocket.v1';

/**
 * Message encoding → VLink family, for `record --from`: protobuf → Protobuf, json → Raw, flatbuffer → Flatbuffers,
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

/**
 * One Foxglove channel per url of a bag (the inverse of {@link schemaTypeOfEncoding}, so `play --serve` →
 * `record --from` keeps each url's family and ser): Protobuf → `protobuf` with the embedded FileDescriptorSet,
 * Raw → `json` (schemaless), Flatbuffers → `flatbuffer` with the bfbs, Cdr → `cdr` (`ros2msg` schema if embedded),
 * others → their VLink label. RPC urls (`Req|Resp`) advertise the request type for protobuf, so Studio can decode.
 */
export function channelsForBag(info: Info, schemas: readonly SchemaData[]): Array<Omit<Channel, 'id'>> {
  const byName = new Map<string, SchemaData>();
  for (const schema of schemas) if (!byName.has(schema.name)) byName.set(schema.name, schema);
  const channels: Array<Omit<Channel, 'id'>> = [];
  const seen = new Set<string>();
  for (const meta of info.urls) {
    if (seen.has(meta.url)) continue;
    seen.add(meta.url);
    const topic = meta.url;
    switch (meta.schemaType) {
      case SchemaType.Protobuf: {
        const name = meta.ser.includes('|') ? serForAction(meta.ser, ActionType.ClientRequest) : meta.ser;
        const schema = byName.get(name) ?? byName.get(meta.ser);
        channels.push({
          topic,
          encoding: 'protobuf',
          schemaName: name,
          schema: schema ? toBase64(schema.data) : '',
          schemaEncoding: 'protobuf',
        });
        break;
      }
      case SchemaType.Raw:
        channels.push({ topic, encoding: 'json', schemaName: meta.ser, schema: '' });
        break;
      case SchemaType.Flatbuffers: {
        const schema = byName.get(meta.ser);
        channels.push({
          topic,
          encoding: 'flatbuffer',
          schemaName: meta.ser,
          schema: schema ? toBase64(schema.data) : '',
          schemaEncoding: 'flatbuffer',
        });
        break;
      }
      case SchemaType.Cdr: {
        const schema = byName.get(meta.ser);
        channels.push({
          topic,
          encoding: 'cdr',
          schemaName: meta.ser,
          schema: schema ? new TextDecoder().decode(schema.data) : '',
          schemaEncoding: 'ros2msg',
        });
        break;
      }
      default:
        channels.push({
          topic,
          encoding: schemaTypeLabel(meta.schemaType) || 'unknown',
          schemaName: meta.ser,
          schema: '',
        });
    }
  }
  return channels;
}
