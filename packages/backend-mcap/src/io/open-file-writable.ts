import type { RecordingContext, ResolvedWriterConfig } from '@vlink/bag-core';
import { FileWritable } from './file-writable.js';
import { RingWritable } from './ring-writable.js';
import type { Writable } from './writable.js';

/** Below this `cacheSize` the caller asked for a small crash window; the file is then written directly. */
export const MIN_RING_CACHE_SIZE = 1024 * 1024;
const MAX_RING = 64 * 1024 * 1024;

/**
 * The writable a recording file gets. On the async writer's own thread, with chunks of at least 1 MiB, the file is
 * written by an I/O thread behind a ring of one chunk (`RingWritable`), where the writer's thread may wait with
 * `Atomics`: compressing a chunk and copying the previous one into the page cache then overlap. Everywhere else
 * (`syncMode`, `worker: false`, small chunks) writes stay synchronous and unbuffered, as VLink's writer does them.
 */
export function openFileWritable(path: string, config: ResolvedWriterConfig, context: RecordingContext): Writable {
  if (context.writerThread && config.cacheSize >= MIN_RING_CACHE_SIZE && canWaitOnSharedMemory()) {
    return new RingWritable(path, Math.min(config.cacheSize, MAX_RING));
  }
  return new FileWritable(path);
}

function canWaitOnSharedMemory(): boolean {
  return typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object' && typeof Atomics.wait === 'function';
}
