import {
  ActionType,
  isValidSchemaType,
  parseAction,
  parseSchemaType,
  resolveSchemaType,
  type Frame,
  type Info,
  type SchemaData,
  type SchemaType,
} from '@vlink/bag';
import { type FrameJson as BaseFrameJson, FrameJsonWriter, toBase64 } from '@vlink/bag-decode/frames';

/**
 * The NDJSON frame shape shared by `cat --format ndjson`, `play --stdout` and `record --stdin`, one object per line,
 * keys in this order:
 *
 * `{"timestamp":1000,"url":"dds://imu","action":"Pub","serType":"json","schemaType":1,"size":64,"data":"<base64>"}`
 *
 * - `timestamp`: µs since recording start (the bag's own frame time, not wall clock): the log time.
 * - `publishTime`: the publish (sample) time, µs since start; written when the reader has one (every format of ours),
 *   optional for `record --stdin` (absent = the log time).
 * - `action`: VLink's stored text (`Pub`, `Sub`, `Set`, `Get`, `C/Req`, `C/Resp`, `S/Req`, `S/Resp`, `Unknown`).
 * - `schemaType`: VLink's integer (0 unknown, 1 raw, 2 zerocopy, 3 protobuf, 4 flatbuffers, 5 cdr).
 * - `size`: payload bytes; `data`: the payload, standard base64 (empty string for an empty payload).
 * - `decoded` (only with `--decode`): the payload as JSON (protobuf through embedded descriptors, JSON, text);
 *   `decodeError`: why a payload that looked decodable was not (then `decoded` is null).
 *
 * Two optional line kinds carry what frames cannot (`cat --meta`): `{"meta":{...}}` (recording start, tag, url losses)
 * and `{"schema":{"name","encoding","schemaType","data"}}`. `record --stdin` applies them, so `cat --meta | record
 * --stdin` keeps the recording start, tag, losses and embedded schemas too.
 */
/** {@link BaseFrameJson} (`@vlink/bag-decode`'s shape, which the server's pages share) plus `--decode`'s value. */
export interface FrameJson extends BaseFrameJson {
  decoded?: unknown;
  /** With `--decode`: why a payload that looked decodable was not (`decoded` is then null), as the server says it. */
  decodeError?: string;
}

export interface MetaJson {
  startTimestamp: number;
  tagName: string;
  format?: string;
  /** Loss ratio per url, where known. */
  losses?: Record<string, number>;
}

export interface SchemaJson {
  name: string;
  encoding: string;
  schemaType: number;
  data: string;
}

const frameJson = new FrameJsonWriter();

/** One NDJSON line (with the trailing newline). */
export function frameLine(frame: Frame, decoded?: { value: unknown; error?: string } | undefined): string {
  if (!decoded) return `${frameJson.text(frame)}\n`;
  const json: FrameJson = frameJson.object(frame);
  json.decoded = decoded.value;
  if (decoded.error !== undefined) json.decodeError = decoded.error;
  return `${JSON.stringify(json)}\n`;
}

export function metaLine(info: Info): string {
  const losses: Record<string, number> = {};
  for (const meta of info.urls) if (meta.loss >= 0) losses[meta.url] = meta.loss;
  const meta: MetaJson = { startTimestamp: info.startTimestamp, tagName: info.tagName, format: info.format };
  if (Object.keys(losses).length > 0) meta.losses = losses;
  return `${JSON.stringify({ meta })}\n`;
}

export function schemaLine(schema: SchemaData): string {
  const json: SchemaJson = {
    name: schema.name,
    encoding: schema.encoding,
    schemaType: schema.schemaType,
    data: toBase64(schema.data),
  };
  return `${JSON.stringify({ schema: json })}\n`;
}

export type ParsedLine =
  | { kind: 'frame'; frame: Frame }
  | { kind: 'meta'; meta: MetaJson }
  | { kind: 'schema'; schema: SchemaData }
  | { kind: 'blank' };

/** Thrown for a line `record --stdin` cannot take; the caller adds the line number. */
export class LineError extends Error {}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeBase64(text: unknown, what: string): Uint8Array {
  if (typeof text !== 'string') throw new LineError(`"${what}" must be a base64 string`);
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw new LineError(`"${what}" is not valid base64`);
  const buffer = Buffer.from(text, 'base64');
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

function parseActionField(value: unknown): ActionType {
  if (value === undefined) return ActionType.Publish;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 8) return value as ActionType;
  if (typeof value === 'string') {
    const action = parseAction(value);
    if (action !== ActionType.Unknown || value === 'Unknown') return action;
  }
  throw new LineError(
    `"action" must be one of Pub, Sub, Set, Get, C/Req, C/Resp, S/Req, S/Resp, Unknown (got ${JSON.stringify(value)})`,
  );
}

function parseSchemaTypeField(value: unknown, serType: string): SchemaType {
  if (value === undefined || value === null) return resolveSchemaType(undefined, serType);
  if (typeof value === 'number' && isValidSchemaType(value)) return value;
  if (typeof value === 'string') return parseSchemaType(value);
  throw new LineError(`"schemaType" must be an integer 0-5 (got ${JSON.stringify(value)})`);
}

/** Parses one NDJSON line of the shape above. */
export function parseLine(line: string): ParsedLine {
  if (line.trim() === '') return { kind: 'blank' };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new LineError('not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new LineError('not a JSON object');
  const record = value as Record<string, unknown>;
  if (record['meta'] !== undefined) return { kind: 'meta', meta: parseMeta(record['meta']) };
  if (record['schema'] !== undefined) return { kind: 'schema', schema: parseSchema(record['schema']) };
  const url = record['url'];
  if (typeof url !== 'string' || url.length === 0) throw new LineError('"url" must be a non-empty string');
  const data = decodeBase64(record['data'] ?? '', 'data');
  const size = record['size'];
  if (size !== undefined && size !== data.byteLength) {
    throw new LineError(`"size" is ${JSON.stringify(size)} but "data" holds ${data.byteLength} bytes`);
  }
  const rawTs = record['timestamp'];
  if (rawTs !== undefined && (typeof rawTs !== 'number' || !Number.isFinite(rawTs))) {
    throw new LineError('"timestamp" must be a number of µs');
  }
  const publishTime = record['publishTime'];
  if (publishTime !== undefined && (typeof publishTime !== 'number' || !Number.isFinite(publishTime))) {
    throw new LineError('"publishTime" must be a number of µs');
  }
  const serType = record['serType'] ?? '';
  if (typeof serType !== 'string') throw new LineError('"serType" must be a string');
  const frame: Frame = {
    timestamp: rawTs === undefined || rawTs < 0 ? -1 : Math.floor(rawTs),
    url,
    data,
    serType,
    schemaType: parseSchemaTypeField(record['schemaType'], serType),
    actionType: parseActionField(record['action']),
  };
  if (publishTime !== undefined) frame.publishTime = Math.floor(publishTime);
  return { kind: 'frame', frame };
}

function parseMeta(value: unknown): MetaJson {
  if (typeof value !== 'object' || value === null) throw new LineError('"meta" must be an object');
  const meta = value as Record<string, unknown>;
  const start = meta['startTimestamp'];
  if (typeof start !== 'number' || !Number.isFinite(start) || start < 0)
    throw new LineError('"meta.startTimestamp" must be ms since the epoch');
  const tag = meta['tagName'] ?? '';
  if (typeof tag !== 'string') throw new LineError('"meta.tagName" must be a string');
  const losses = meta['losses'];
  const result: MetaJson = { startTimestamp: start, tagName: tag };
  if (losses !== undefined) {
    if (typeof losses !== 'object' || losses === null) throw new LineError('"meta.losses" must be an object');
    result.losses = {};
    for (const [url, loss] of Object.entries(losses)) {
      if (url === '') throw new LineError('"meta.losses" names an empty url');
      if (typeof loss !== 'number' || !Number.isFinite(loss))
        throw new LineError(`"meta.losses" of ${url} must be a number`);
      result.losses[url] = loss;
    }
  }
  return result;
}

function parseSchema(value: unknown): SchemaData {
  if (typeof value !== 'object' || value === null) throw new LineError('"schema" must be an object');
  const schema = value as Record<string, unknown>;
  const name = schema['name'];
  if (typeof name !== 'string' || name.length === 0) throw new LineError('"schema.name" must be a non-empty string');
  const encoding = schema['encoding'] ?? '';
  if (typeof encoding !== 'string') throw new LineError('"schema.encoding" must be a string');
  const type = schema['schemaType'];
  const schemaType = typeof type === 'number' && isValidSchemaType(type) ? type : parseSchemaType(encoding);
  return { name, encoding, schemaType, data: decodeBase64(schema['data'] ?? '', 'schema.data') };
}
