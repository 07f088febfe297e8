import { actionText, type Frame } from '@vlink/bag';
import type { Decoded, DecodedKind as PayloadKind, PayloadDecoder } from '@vlink/bag-decode';
import { toBase64 } from './base64.js';

/**
 * How `decode=true` turned a payload into `data` (the encoding that decoded it: `protobuf`, `json`, `ros1`, `cdr`,
 * `ulog`, or `text`); `null` when it was left base64.
 */
export type DecodedKind = PayloadKind | null;

/** A message as `format=json` and `format=ndjson` return it. */
export interface MessageJson {
  /** µs since recording start: the log time (when the recorder received the message). */
  timestamp: number;
  /** The publish (sample) time, µs since start; absent where the bag's format has none (ROS 1 without a header). */
  publishTime?: number;
  url: string;
  /** ActionType text as stored (`Pub`, `Sub`, `Set`, `Get`, `C/Req`, …). */
  action: string;
  serType: string;
  /** SchemaType number (1 raw, 3 protobuf, …), as in `Info.urls[].schemaType`. */
  schemaType: number;
  /** Payload bytes. */
  size: number;
  /** base64 payload; with `decode=true` and `decoded` not null, the decoded JSON value or text instead. */
  data: unknown;
  /** Only with `decode=true`: how `data` was decoded, null when it stayed base64. */
  decoded?: DecodedKind;
  /** Only with `decode=true`: why a payload that looked decodable was not. */
  decodeError?: string;
}

/**
 * Serialises frames to JSON text. The part of a line that depends only on url/action/ser/schemaType is built once
 * and reused, which keeps NDJSON near memcpy speed for small messages.
 */
export class FrameJson {
  private readonly prefixes = new Map<string, string>();

  constructor(private readonly decoder?: PayloadDecoder) {}

  object(frame: Frame): MessageJson {
    const out: MessageJson = {
      timestamp: frame.timestamp,
      ...(frame.publishTime !== undefined ? { publishTime: frame.publishTime } : {}),
      url: frame.url,
      action: actionText(frame.actionType),
      serType: frame.serType,
      schemaType: frame.schemaType,
      size: frame.data.length,
      data: toBase64(frame.data),
    };
    if (this.decoder) applyDecoded(out, this.decoder.decode(frame));
    return out;
  }

  /** One JSON object without a trailing newline, byte-identical to `JSON.stringify(object(frame))`. */
  text(frame: Frame): string {
    if (this.decoder) return JSON.stringify(this.object(frame));
    const key = `${frame.actionType}\x1f${frame.schemaType}\x1f${frame.serType}\x1f${frame.url}`;
    let prefix = this.prefixes.get(key);
    if (prefix === undefined) {
      prefix =
        `,"url":${JSON.stringify(frame.url)},"action":${JSON.stringify(actionText(frame.actionType))}` +
        `,"serType":${JSON.stringify(frame.serType)},"schemaType":${frame.schemaType},"size":`;
      if (this.prefixes.size > 4096) this.prefixes.clear();
      this.prefixes.set(key, prefix);
    }
    const publish = frame.publishTime === undefined ? '' : `,"publishTime":${frame.publishTime}`;
    return `{"timestamp":${frame.timestamp}${publish}${prefix}${frame.data.length},"data":"${toBase64(frame.data)}"}`;
  }
}

function applyDecoded(out: MessageJson, decoded: Decoded): void {
  if (decoded.kind === 'hex') {
    out.decoded = null;
    if (decoded.reason !== undefined) out.decodeError = decoded.reason;
  } else {
    out.decoded = decoded.kind;
    out.data = decoded.value;
  }
}
