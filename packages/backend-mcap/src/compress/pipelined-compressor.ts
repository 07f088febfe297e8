/**
 * A chunk compressor that works while the writer goes on: `start` hands a chunk's records over, the writer fills the
 * next chunk, and `finish` collects the result just before the file needs it. Up to two chunks are in it at a time:
 * the next chunk may be started before the result of the one before is collected, so the compressor never waits for
 * the writer. `McapWriter` takes one (injected, like its codecs) next to the synchronous codec it falls back on.
 */
export interface PipelinedCompressor {
  /** Chunks it holds at once (started and not yet collected by `finish`). */
  readonly depth: number;
  /**
   * Starts compressing `records` (copied before this returns, so the caller may reuse them). False when it cannot
   * take them (larger than its buffers, or not started yet): the caller then compresses them itself. Throws when
   * `depth` chunks are in it already.
   */
  start(records: Uint8Array, level: number): boolean;
  /**
   * Waits for the oldest chunk in it: its records as given, and their compressed bytes (undefined when they did not
   * compress into the room there was). Both views are valid until the next `start`.
   */
  finish(): { records: Uint8Array; compressed: Uint8Array | undefined };
  /** Whether a chunk is in it whose result is ready: `finish` would not wait. */
  finished(): boolean;
  /** Lets its resources go; a chunk in flight is abandoned. */
  close(): void;
}
