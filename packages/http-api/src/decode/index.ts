/**
 * `@vlink/bag-server/decode`: the payload decoder shared by the HTTP API, the CLI and the web player. Runtime-neutral
 * (Uint8Array, TextDecoder, @bufbuild/protobuf), so it loads without the server.
 */
export { PayloadDecoder } from './payload-decoder.js';
export type { DecodableFrame, Decoded, PayloadDecoderOptions } from './payload-decoder.js';
export { ProtobufDecoder } from './protobuf-decoder.js';
export { DEFAULT_MAX_DEPTH } from './depth.js';
export type { DecoderSchema, ProtobufDecoderOptions } from './protobuf-decoder.js';
