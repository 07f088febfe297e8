/**
 * `@vlink/bag-decode`: the one payload decoder of vlink-bag and its Foxglove channel mapping, used by the CLI, the
 * server (and its worker pool), the Foxglove endpoints and the web player. Browser-safe: no `node:*` imports.
 */
export { PayloadDecoder } from './payload-decoder.js';
export type {
  DecodableFrame,
  Decoded,
  DecodedKind,
  DecoderChannel,
  PayloadDecoderOptions,
} from './payload-decoder.js';
export type { DecoderSchema, ProtobufOptions } from './protobuf.js';
export { payloadEncoding, wellKnownEncoding, type PayloadEncoding } from './encodings.js';
export { foxgloveChannels, type ChannelSource, type FoxgloveChannel } from './foxglove-channels.js';
export { DEFAULT_MAX_DEPTH } from './depth.js';
export { serForAction } from '@vlink/bag-core/model';
export * from './frames.js';
