import type { Frame } from '@vlink/bag';
import {
  type Decoded,
  type FrameJson,
  FrameJsonWriter,
  type DecodedKind as PayloadKind,
  type PayloadDecoder,
} from '@vlink/bag-decode';

/**
 * How `decode=true` turned a payload into `data` (the encoding that decoded it: `protobuf`, `json`, `ros1`, `cdr`,
 * `ulog`, or `text`); `null` when it was left base64.
 */
export type DecodedKind = PayloadKind | null;

/** A message as `format=json` and `format=ndjson` return it: `@vlink/bag-decode`'s frame JSON, plus decoding. */
export interface MessageJson extends Omit<FrameJson, 'data'> {
  /** base64 payload; with `decode=true` and `decoded` not null, the decoded JSON value or text instead. */
  data: unknown;
  /** Only with `decode=true`: how `data` was decoded, null when it stayed base64. */
  decoded?: DecodedKind;
  /** Only with `decode=true`: why a payload that looked decodable was not. */
  decodeError?: string;
}

/**
 * Serialises frames to JSON text: `@vlink/bag-decode`'s {@link FrameJsonWriter} (the shape `cat` prints too), plus,
 * with a decoder, the decoded value in `data` and its kind in `decoded`.
 */
export class MessageJsonWriter {
  private readonly frames = new FrameJsonWriter();

  constructor(private readonly decoder?: PayloadDecoder) {}

  object(frame: Frame): MessageJson {
    const out: MessageJson = this.frames.object(frame);
    if (this.decoder) applyDecoded(out, this.decoder.decode(frame));
    return out;
  }

  /** One JSON object without a trailing newline, byte-identical to `JSON.stringify(object(frame))`. */
  text(frame: Frame): string {
    return this.decoder ? JSON.stringify(this.object(frame)) : this.frames.text(frame);
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
