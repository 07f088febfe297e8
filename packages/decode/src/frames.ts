/**
 * `@vlink/bag-decode/frames`: the frame encodings alone (frame JSON, the binary frame stream, base64), without the
 * payload decoder and its libraries (protobuf, CBOR, FlatBuffers), so a program that only writes frames out (the
 * CLI's `cat` without `--decode`) does not load them.
 */
export { toBase64 } from './base64.js';
export { FrameJsonWriter, type FrameJson, type JsonFrame } from './frame-json.js';
export {
  FrameEncoder,
  decodeFrameAt,
  decodeFrames,
  BINARY_FRAMES_CONTENT_TYPE,
  FRAME_PREFIX_BYTES,
  FRAME_FIXED_HEADER_BYTES,
  FRAME_PUBLISH_BYTES,
  type DecodedFrame,
} from './binary-frame.js';
