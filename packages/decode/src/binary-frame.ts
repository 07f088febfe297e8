import type { ActionType, Frame, SchemaType } from '@vlink/bag-core/model';
import { BagError } from '@vlink/bag-core/errors';

/**
 * The binary frame layout shared by `GET …/messages?format=binary` (frames back to back) and the replay WebSocket
 * (one frame per binary message). All integers little-endian:
 *
 * ```
 * offset  size  field
 * 0       4     headerLen   u32  bytes of the header that follows (a client skips fields it does not know)
 * 4       4     payloadLen  u32
 * 8       8     timestamp   i64  µs since recording start
 * 16      1     action      u8   ActionType (5 = Pub …)
 * 17      1     schemaType  u8   SchemaType (1 = raw, 3 = protobuf …)
 * 18      2     urlLen      u16
 * 20      urlLen  url       UTF-8
 * …       2     serLen      u16
 * …       serLen  ser       UTF-8
 * …       8     publishTime i64  µs since recording start (version 2; only when it differs from timestamp)
 * 8+headerLen  payloadLen  payload
 * ```
 *
 * headerLen = 14 + urlLen + serLen in version 1, + 8 with a publish time (version 2); a frame occupies
 * 8 + headerLen + payloadLen bytes. Clients skip header bytes they do not know, so version 1 clients read version 2.
 * A frame whose publish time equals its log time (every VLink recording) is sent without it, so its bytes and a
 * client's per-(url, ser) header cache stay those of version 1: no publish time = the log time.
 */
export const FRAME_PREFIX_BYTES = 8;
export const FRAME_FIXED_HEADER_BYTES = 14;
/** The optional publish time after ser. */
export const FRAME_PUBLISH_BYTES = 8;
export const BINARY_FRAMES_CONTENT_TYPE = 'application/vnd.vlink.frames';

const encoder = new TextEncoder();
const MAX_U16 = 0xffff;
const TWO_32 = 2 ** 32;

/** Encodes frames into the layout; caches the UTF-8 of urls and ser names, which repeat. */
export class FrameEncoder {
  private readonly strings = new Map<string, Uint8Array>();

  /** Bytes `frame` will take. */
  sizeOf(frame: Frame): number {
    return (
      FRAME_PREFIX_BYTES +
      FRAME_FIXED_HEADER_BYTES +
      this.utf8(frame.url).length +
      this.utf8(frame.serType).length +
      (hasOwnPublishTime(frame) ? FRAME_PUBLISH_BYTES : 0) +
      frame.data.length
    );
  }

  /** Writes `frame` at `offset` of `out` (which must have `sizeOf(frame)` bytes free); returns the end offset. */
  writeInto(frame: Frame, out: Uint8Array, view: DataView, offset: number): number {
    const url = this.utf8(frame.url);
    const ser = this.utf8(frame.serType);
    const publish = hasOwnPublishTime(frame) ? frame.publishTime! : undefined;
    const headerLen =
      FRAME_FIXED_HEADER_BYTES + url.length + ser.length + (publish === undefined ? 0 : FRAME_PUBLISH_BYTES);
    const ts = frame.timestamp;
    view.setUint32(offset, headerLen, true);
    view.setUint32(offset + 4, frame.data.length, true);
    // i64 without BigInt: timestamps are safe integers, and negative ones (never stored) still encode correctly.
    view.setUint32(offset + 8, ts >>> 0, true);
    view.setInt32(offset + 12, Math.floor(ts / TWO_32), true);
    out[offset + 16] = frame.actionType;
    out[offset + 17] = frame.schemaType;
    view.setUint16(offset + 18, url.length, true);
    out.set(url, offset + 20);
    let at = offset + 20 + url.length;
    view.setUint16(at, ser.length, true);
    out.set(ser, at + 2);
    at += 2 + ser.length;
    if (publish !== undefined) {
      view.setUint32(at, publish >>> 0, true);
      view.setInt32(at + 4, Math.floor(publish / TWO_32), true);
      at += FRAME_PUBLISH_BYTES;
    }
    out.set(frame.data, at);
    return at + frame.data.length;
  }

  /** One frame in its own buffer (a WebSocket message). */
  encode(frame: Frame): Uint8Array {
    const out = new Uint8Array(this.sizeOf(frame));
    this.writeInto(frame, out, new DataView(out.buffer), 0);
    return out;
  }

  private utf8(text: string): Uint8Array {
    let bytes = this.strings.get(text);
    if (!bytes) {
      bytes = encoder.encode(text);
      // The layout has a u16 length: a longer name cannot be framed, and cutting it would hand out another url.
      if (bytes.length > MAX_U16)
        throw new BagError(
          'LIMIT_REACHED',
          `a url or ser type of ${bytes.length} bytes is longer than a binary frame holds (65535): use the JSON formats`,
        );
      if (this.strings.size > 4096) this.strings.clear();
      this.strings.set(text, bytes);
    }
    return bytes;
  }
}

/** A publish time worth sending: one that differs from the log time. */
function hasOwnPublishTime(frame: Frame): boolean {
  return frame.publishTime !== undefined && frame.publishTime !== frame.timestamp;
}

/** A decoded frame; `data` is a view into the parsed buffer. */
export interface DecodedFrame {
  timestamp: number;
  /** Present when the frame carried one (version 2 header): a publish time other than `timestamp`. */
  publishTime?: number;
  url: string;
  serType: string;
  actionType: ActionType;
  schemaType: SchemaType;
  data: Uint8Array;
}

const textDecoder = new TextDecoder();

/** Decodes one frame at `offset`; returns undefined when `bytes` does not yet hold all of it. */
export function decodeFrameAt(bytes: Uint8Array, offset = 0): { frame: DecodedFrame; end: number } | undefined {
  if (bytes.length - offset < FRAME_PREFIX_BYTES) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = view.getUint32(offset, true);
  const payloadLen = view.getUint32(offset + 4, true);
  const end = offset + FRAME_PREFIX_BYTES + headerLen + payloadLen;
  if (bytes.length < end) return undefined;
  if (headerLen < FRAME_FIXED_HEADER_BYTES) throw new RangeError(`frame header too short (${headerLen} bytes)`);
  const timestamp = view.getUint32(offset + 8, true) + view.getInt32(offset + 12, true) * TWO_32;
  const urlLen = view.getUint16(offset + 18, true);
  const url = textDecoder.decode(bytes.subarray(offset + 20, offset + 20 + urlLen));
  const serAt = offset + 20 + urlLen;
  const serLen = view.getUint16(serAt, true);
  const serType = textDecoder.decode(bytes.subarray(serAt + 2, serAt + 2 + serLen));
  const payloadAt = offset + FRAME_PREFIX_BYTES + headerLen;
  const frame: DecodedFrame = {
    timestamp,
    url,
    serType,
    actionType: bytes[offset + 16] as ActionType,
    schemaType: bytes[offset + 17] as SchemaType,
    data: bytes.subarray(payloadAt, payloadAt + payloadLen),
  };
  const publishAt = serAt + 2 + serLen;
  if (publishAt + FRAME_PUBLISH_BYTES <= payloadAt)
    frame.publishTime = view.getUint32(publishAt, true) + view.getInt32(publishAt + 4, true) * TWO_32;
  return { frame, end };
}

/** Decodes a whole buffer of back-to-back frames (e.g. a complete `format=binary` response). */
export function decodeFrames(bytes: Uint8Array): DecodedFrame[] {
  const frames: DecodedFrame[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const decoded = decodeFrameAt(bytes, offset);
    if (!decoded) throw new RangeError(`truncated frame at byte ${offset}`);
    frames.push(decoded.frame);
    offset = decoded.end;
  }
  return frames;
}
