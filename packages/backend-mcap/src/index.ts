export { loadCodecs, zstdLevelFor } from './codecs.js';
export type { ChunkCodec, Codecs } from './codecs.js';
