import type { RecordingContext, ResolvedWriterConfig } from '@vlink/bag-core';
import { canWaitOnSharedMemory } from '@vlink/bag-core/internal';
import { writesZstdChunks } from '../vcap/vcap-format.js';
import type { PipelinedCompressor } from './pipelined-compressor.js';
import { ThreadedCompressor } from './threaded-compressor.js';

/** Below this chunk size the caller asked for a small crash window; chunks are then compressed where they are written. */
export const MIN_THREADED_CHUNK_SIZE = 1024 * 1024;

/**
 * The compressor thread a recording file gets, if any: with zstd chunks of at least 1 MiB, on a thread that may block
 * on shared memory (a browser's main thread may not). Chunks close once they reach `chunkSize`, so the last message
 * may take one past it; room for a quarter more covers frames up to that size, and a chunk larger still is compressed
 * on the writer's thread. An async writer's own thread gets one per file. On the caller's thread (`syncMode`,
 * `worker: false`) the thread's one compressor is lent to one file at a time (`ThreadedCompressor.lend`); VLink's
 * sync semantics hold: `push` writes on the caller's thread without a queue and the frame is copied into its chunk
 * there, only the full chunk's compression moves, while the caller fills the next (hand-measured, 192 MiB of 1 MiB
 * frames in 4 MiB zstd chunks: Node 420 → 270 ms, Deno 372 → 235 ms, Bun 340 → 195 ms). The crash window grows from
 * one chunk to the chunks in the compressor (two) and the one compressed meanwhile, as in worker mode.
 */
export function openChunkCompressor(
  chunkSize: number,
  config: ResolvedWriterConfig,
  context: RecordingContext,
  file: string,
): PipelinedCompressor | undefined {
  if (chunkSize < MIN_THREADED_CHUNK_SIZE || !writesZstdChunks(config) || !canWaitOnSharedMemory()) return undefined;
  const capacity = chunkSize + Math.ceil(chunkSize / 4);
  return context.writerThread ? ThreadedCompressor.open(capacity, file) : ThreadedCompressor.lend(capacity, file);
}
