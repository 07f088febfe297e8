export { createApp } from './app.js';
export type { AppOptions, BagApp } from './app.js';
export { serve, isLoopbackHost } from './serve.js';
export type { ServeOptions, RunningServer } from './serve.js';
export { SERVER_VERSION } from './version.js';
export { LAKE_DEFAULTS } from './lake/lake-options.js';
export type { LakeServerOptions, QueryableLake } from './lake/lake-options.js';
export {
  FrameEncoder,
  decodeFrameAt,
  decodeFrames,
  BINARY_FRAMES_CONTENT_TYPE,
  FRAME_PREFIX_BYTES,
  FRAME_FIXED_HEADER_BYTES,
} from '@vlink/bag-decode';
export type { DecodedFrame } from '@vlink/bag-decode';
export type { MessageJson } from './messages/frame-json.js';
export type { StatusEvent, ReplayStatus } from './replay/replay-session.js';
export type { ControlId } from './replay/answers.js';
export type { WebSocketSupport } from './ws/socket.js';
export { statusForCode } from './http/errors.js';
export type { ErrorBody, HttpErrorCode } from './http/errors.js';
export { FOXGLOVE_SUBPROTOCOL } from './foxglove/foxglove-socket.js';
