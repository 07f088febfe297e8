import type { RecordingContext, ResolvedWriterConfig } from '@vlink/bag-core';
import { canWaitOnSharedMemory } from '@vlink/bag-core/internal';
import { writesZstdChunks } from '../vcap/vcap-format.js';
import type { PipelinedCompressor } from './pipelined-compressor.js';
import { ThreadedCompressor } from './threaded-compressor.js';

/** Below this chunk size the caller asked for a small crash window; chunks are then compressed where they are written. */
export const MIN_THREADED_CHUNK_SIZE = 1024 * 1024;

/**
 * The compressor thread a recording file gets, if any: on the async writer's own thread, with zstd chunks of at least
 * 1 MiB. Chunks close once they reach `chunkSize`, so the last message may take one past it; room for a quarter more
 * covers frames up to that size, and a chunk larger still is compressed on the writer's thread. Elsewhere
 * (`syncMode`, `worker: false`: VLink's sync semantics) compression stays on the caller's thread.
 */
export function openChunkCompressor(
  chunkSize: number,
  config: ResolvedWriterConfig,
  context: RecordingContext,
  file: string,
): PipelinedCompressor | undefined {
  if (
    !context.writerThread ||
    chunkSize < MIN_THREADED_CHUNK_SIZE ||
    !writesZstdChunks(config) ||
    !canWaitOnSharedMemory()
  )
    return undefined;
  return ThreadedCompressor.open(chunkSize + Math.ceil(chunkSize / 4), file);
}
