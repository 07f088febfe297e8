import { SchemaType, schemaTypeLabel, serForAction, ActionType, type Info, type SchemaData } from '@vlink/bag';
import type { Channel } from '@foxglove/ws-protocol';
import { toBase64 } from '../messages/base64.js';

/**
 * One Foxglove channel per url of the bag (formats that key metadata by url + action contribute one entry per
 * action; they share the channel). Encodings:
 * protobuf → `protobuf` with the embedded FileDescriptorSet (base64); raw → `json` with an empty schema (Foxglove's
 * schemaless JSON); anything else → its VLink label, with its embedded schema if there is one.
 */
export function channelsFor(info: Info, schemas: readonly SchemaData[]): Channel[] {
  const byName = new Map<string, SchemaData>();
  for (const schema of schemas) if (!byName.has(schema.name)) byName.set(schema.name, schema);
  const channels: Channel[] = [];
  const seen = new Set<string>();
  for (const meta of info.urls) {
    if (seen.has(meta.url)) continue;
    seen.add(meta.url);
    const id = channels.length + 1;
    // RPC urls carry `Req|Resp`; a channel has one schema, so it advertises the request type.
    const schemaName = meta.ser.includes('|') ? serForAction(meta.ser, ActionType.ClientRequest) : meta.ser;
    if (meta.schemaType === SchemaType.Protobuf) {
      const schema = byName.get(schemaName) ?? byName.get(meta.ser);
      channels.push({
        id,
        topic: meta.url,
        encoding: 'protobuf',
        schemaName,
        schema: schema ? toBase64(schema.data) : '',
        schemaEncoding: 'protobuf',
      });
    } else if (meta.schemaType === SchemaType.Raw) {
      channels.push({ id, topic: meta.url, encoding: 'json', schemaName, schema: '' });
    } else {
      const label = schemaTypeLabel(meta.schemaType) || 'unknown';
      const schema = byName.get(schemaName);
      channels.push({
        id,
        topic: meta.url,
        encoding: label,
        schemaName,
        schema: schema ? toBase64(schema.data) : '',
        schemaEncoding: label,
      });
    }
  }
  return channels;
}
