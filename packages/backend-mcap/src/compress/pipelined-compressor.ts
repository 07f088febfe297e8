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
   * `depth` chunks are in it already. With `crcs`, it is asked for the CRC-32 of the records and of the compressed
   * bytes too (the chunk CRC and the data-section CRC), so the writer's thread need not read either again.
   */
  start(records: Uint8Array, level: number, crcs?: boolean): boolean;
  /**
   * Waits for the oldest chunk in it: its records as given, and their compressed bytes (undefined when they did not
   * compress into the room there was). Both views are valid until the next `start`. Where the chunk was started with
   * `crcs` and the compressor computes them, their CRC-32s (unsigned); a compressor may leave them out.
   */
  finish(): CompressedChunk;
  /** Whether a chunk is in it whose result is ready: `finish` would not wait. */
  finished(): boolean;
  /** Lets its resources go; a chunk in flight is abandoned. */
  close(): void;
}

/** What {@link PipelinedCompressor.finish} returns for a chunk. */
export interface CompressedChunk {
  records: Uint8Array;
  compressed: Uint8Array | undefined;
  /** CRC-32 of `records`, when asked for and computed. */
  recordsCrc?: number;
  /** CRC-32 of `compressed`, when asked for, computed and there are compressed bytes. */
  compressedCrc?: number;
}
