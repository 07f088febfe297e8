import { payloadEncoding } from './encodings.js';
import { ActionType, serForAction } from '@vlink/bag-core/model';
import { toBase64 } from './base64.js';
import type { DecoderSchema } from './protobuf.js';

/** A url of the bag as `Info.urls` lists it (one entry per url + action for `.vcap`; they share the channel). */
export interface ChannelSource {
  url: string;
  ser: string;
  schemaType: number;
  encoding?: string | undefined;
}

/** A Foxglove WebSocket channel without its id (`Omit<Channel, 'id'>` of `@foxglove/ws-protocol`). */
export interface FoxgloveChannel {
  topic: string;
  encoding: string;
  schemaName: string;
  schema: string;
  schemaEncoding?: string;
}

/** Schema encodings that are bytes: the ws-protocol carries them base64-encoded, the text ones as they are. */
const BINARY_SCHEMAS: ReadonlySet<string> = new Set(['protobuf', 'flatbuffer']);
const CDR_SCHEMAS: ReadonlySet<string> = new Set(['ros2msg', 'ros2idl', 'omgidl']);

/**
 * The one Foxglove channel mapping, shared by `vlink-bag play --serve` and the server's Foxglove endpoint: one
 * channel per url, in `Info.urls` order, with MCAP's well-known message encodings (`protobuf`, `json`, `cbor`,
 * `flatbuffer`, `cdr`, `ros1`; `ulog` and other encodings under their own name) and the matching schema encodings (`protobuf`,
 * `jsonschema`, `flatbuffer`, `ros2msg`/`ros2idl`/`omgidl`, `ros1msg`, `ulog`). As the ws-protocol says, binary
 * schemas (protobuf FileDescriptorSets, flatbuffers bfbs) travel base64-encoded and text schemas as text. VLink Raw
 * urls are Foxglove's schemaless `json`; RPC urls (`Req|Resp`) advertise their request type, so Studio can decode the
 * requests. A url whose schema is not embedded gets an empty schema.
 */
export function foxgloveChannels(urls: readonly ChannelSource[], schemas: readonly DecoderSchema[]): FoxgloveChannel[] {
  const byName = new Map<string, DecoderSchema>();
  for (const schema of schemas) if (!byName.has(schema.name)) byName.set(schema.name, schema);
  const channels: FoxgloveChannel[] = [];
  const seen = new Set<string>();
  for (const meta of urls) {
    if (seen.has(meta.url)) continue;
    seen.add(meta.url);
    const schemaName = serForAction(meta.ser, ActionType.ClientRequest);
    const encoding = payloadEncoding(meta.encoding, meta.schemaType, schemaName);
    const found = byName.get(schemaName) ?? byName.get(meta.ser);
    const [messageEncoding, schemaEncoding] = foxgloveEncodings(encoding, (found?.encoding ?? '').toLowerCase()) ?? [
      meta.encoding || 'unknown',
      undefined,
    ];
    if (!found || schemaEncoding === undefined) {
      channels.push({ topic: meta.url, encoding: messageEncoding, schemaName, schema: '' });
      continue;
    }
    const schema = BINARY_SCHEMAS.has(schemaEncoding) ? toBase64(found.data) : new TextDecoder().decode(found.data);
    channels.push({ topic: meta.url, encoding: messageEncoding, schemaName, schema, schemaEncoding });
  }
  return channels;
}

/**
 * Foxglove's message and schema encoding for a payload encoding (`declared`: the embedded schema's own encoding), or
 * undefined for one Foxglove has no name for (advertised under its own name, without a schema).
 */
function foxgloveEncodings(encoding: string | undefined, declared: string): [string, string | undefined] | undefined {
  switch (encoding) {
    case 'protobuf':
    case 'flatbuffer':
    case 'ulog':
      return [encoding, encoding];
    case 'cdr':
      return ['cdr', CDR_SCHEMAS.has(declared) ? declared : 'ros2msg'];
    case 'ros1':
      return ['ros1', 'ros1msg'];
    case 'cbor':
      return ['cbor', undefined];
    case 'json':
    case 'text':
    case 'raw':
      // Foxglove's json channels may carry a JSON Schema; VLink's Raw urls have none (schemaless JSON).
      return ['json', declared === 'jsonschema' ? 'jsonschema' : undefined];
    default:
      return undefined;
  }
}
