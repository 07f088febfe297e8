import type { RecordingContext, ResolvedWriterConfig } from '@vlink/bag-core';
import { FileWritable } from './file-writable.js';
import { RingWritable } from './ring-writable.js';
import { writesZstdChunks } from '../vcap/vcap-format.js';
import type { Writable } from './writable.js';

/** Below this `cacheSize` the caller asked for a small crash window; the file is then written directly. */
export const MIN_RING_CACHE_SIZE = 1024 * 1024;
const MAX_RING = 64 * 1024 * 1024;

/**
 * The writable a recording file gets. On the async writer's own thread, with zstd chunks of at least 1 MiB, the file
 * is written by an I/O thread behind a ring of one chunk (`RingWritable`), where the writer's thread may wait with
 * `Atomics`: compressing a chunk and copying the previous one into the page cache then overlap. Uncompressed chunks
 * have no work to overlap with — the writer's thread only copies — and the ring's extra copy cost more than it saved
 * (measured by hand with the `throughput` loop of bench/writer.bench.mjs at 1 KiB frames, Node: about 0.64 of
 * syncMode with the ring vs 0.78 without while the page cache was fast, no difference while it was slow).
 * Everywhere else (`syncMode`, `worker: false`, small or uncompressed chunks) writes stay synchronous and unbuffered,
 * as VLink's writer does them.
 */
export function openFileWritable(path: string, config: ResolvedWriterConfig, context: RecordingContext): Writable {
  if (context.writerThread && config.cacheSize >= MIN_RING_CACHE_SIZE && writesZstdChunks(config) && canWaitOnSharedMemory()) {
    return new RingWritable(path, Math.min(config.cacheSize, MAX_RING));
  }
  return new FileWritable(path);
}

function canWaitOnSharedMemory(): boolean {
  return typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object' && typeof Atomics.wait === 'function';
}
