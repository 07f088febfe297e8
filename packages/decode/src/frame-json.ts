import { actionText, type Frame } from '@vlink/bag-core/model';
import { toBase64 } from './base64.js';

/**
 * A frame as JSON, the one shape of `cat --format ndjson`, `play --stdout`, `record --stdin` and the server's
 * `/messages?format=json|ndjson`, keys in this order: `timestamp` (log time, µs since recording start), `publishTime`
 * (µs, when the reader has one), `url`, `action` (VLink's stored text: `Pub`, `C/Req`, …), `serType`, `schemaType`
 * (VLink's integer), `size` (payload bytes), `data` (standard base64). Decoding adds fields of its own (the CLI's
 * `decoded`, the server's `decoded` kind); this is the part every consumer shares.
 */
export interface FrameJson {
  timestamp: number;
  publishTime?: number;
  url: string;
  action: string;
  serType: string;
  schemaType: number;
  size: number;
  data: string;
}

/** The frame fields the JSON is made of. */
export type JsonFrame = Pick<
  Frame,
  'timestamp' | 'publishTime' | 'url' | 'actionType' | 'serType' | 'schemaType' | 'data'
>;

/**
 * Writes frames as {@link FrameJson}. `text` builds the part of a line that depends only on url/action/ser/schemaType
 * once per stream and reuses it, which keeps NDJSON near memcpy speed for small messages.
 */
export class FrameJsonWriter {
  private readonly prefixes = new Map<string, string>();

  object(frame: JsonFrame): FrameJson {
    return {
      timestamp: frame.timestamp,
      ...(frame.publishTime !== undefined ? { publishTime: frame.publishTime } : {}),
      url: frame.url,
      action: actionText(frame.actionType),
      serType: frame.serType,
      schemaType: frame.schemaType,
      size: frame.data.length,
      data: toBase64(frame.data),
    };
  }

  /** One JSON object without a trailing newline, byte-identical to `JSON.stringify(object(frame))`. */
  text(frame: JsonFrame): string {
    const key = `${frame.actionType}\x1f${frame.schemaType}\x1f${frame.serType}\x1f${frame.url}`;
    let prefix = this.prefixes.get(key);
    if (prefix === undefined) {
      prefix =
        `,"url":${JSON.stringify(frame.url)},"action":${JSON.stringify(actionText(frame.actionType))}` +
        `,"serType":${JSON.stringify(frame.serType)},"schemaType":${frame.schemaType},"size":`;
      // Bounded: a stream of ever-new urls must not grow this without end.
      if (this.prefixes.size > 4096) this.prefixes.clear();
      this.prefixes.set(key, prefix);
    }
    const publish = frame.publishTime === undefined ? '' : `,"publishTime":${frame.publishTime}`;
    return `{"timestamp":${frame.timestamp}${publish}${prefix}${frame.data.length},"data":"${toBase64(frame.data)}"}`;
  }
}
