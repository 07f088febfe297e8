/**
 * Random-access, synchronous byte source (the `@mcap/core` readable, made synchronous because the Backend seam is).
 * Offsets and lengths are numbers: files stay far below 2^53 bytes.
 */
export interface Readable {
  /** Total bytes available. */
  size(): number;
  /**
   * Exactly `length` bytes at `offset`, read into `target` when given (it must hold `length` bytes) and returned as a
   * view of it; otherwise into a buffer the readable may own. Throws a `BagError('CORRUPT_FILE')` for a range outside
   * the source: callers bounds-check first, this is the last line of defence.
   */
  read(offset: number, length: number, target?: Uint8Array): Uint8Array;
  close(): void;
}
