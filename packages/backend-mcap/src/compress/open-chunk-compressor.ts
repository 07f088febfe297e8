import type { ResolvedWriterConfig } from '@vlink/bag-core';
import { canWaitOnSharedMemory } from '@vlink/bag-core/internal';
import { writesZstdChunks } from '../vcap/vcap-format.js';
import type { PipelinedCompressor } from './pipelined-compressor.js';
import { ThreadedCompressor } from './threaded-compressor.js';

/** Below this chunk size the caller asked for a small crash window; chunks are then compressed where they are written. */
export const MIN_THREADED_CHUNK_SIZE = 1024 * 1024;

/**
 * The compressor thread a recording file gets, if any: with zstd chunks of at least 1 MiB, on any thread that may
 * block on shared memory (a browser's main thread may not). Chunks close once they reach `chunkSize`, so the last
 * message may take one past it; room for a quarter more covers frames up to that size, and a chunk larger still is
 * compressed on the writer's thread. `syncMode` (and `worker: false`) too: VLink's sync semantics are that `push`
 * writes on the caller's thread without a queue, and the frame is still copied into its chunk there; only the chunk's
 * compression moves, while the caller fills the next (hand-measured, Node, 192 MiB of 1 MiB frames in 4 MiB zstd
 * chunks: 425 ms on the caller's thread alone, 249 ms with the compressor). A thread that blocks in `push` anyway
 * (compressing a chunk) now blocks at most as long, waiting for one. The crash window grows from one chunk to the
 * chunks in the compressor (two) and the one compressed meanwhile, as in worker mode.
 */
export function openChunkCompressor(
  chunkSize: number,
  config: ResolvedWriterConfig,
  file: string,
): PipelinedCompressor | undefined {
  if (chunkSize < MIN_THREADED_CHUNK_SIZE || !writesZstdChunks(config) || !canWaitOnSharedMemory()) return undefined;
  return ThreadedCompressor.open(chunkSize + Math.ceil(chunkSize / 4), file);
}
