/**
 * Append-only, synchronous byte sink (the `@mcap/core` writable plus durability). The optional methods let the
 * writer skip copies: `writev` hands large payloads to the OS as they are, `writeAt` patches a chunk header that was
 * written ahead of its records. A writable without them still works; the writer then copies into its chunk buffer.
 */
export interface Writable {
  /** Bytes appended so far (the offset the next `write` lands at). */
  position(): number;
  write(bytes: Uint8Array): void;
  /** Appends all `chunks` in order, ideally with one vectored write. */
  writev?(chunks: readonly Uint8Array[]): void;
  /** Overwrites bytes written earlier; `position()` does not move. */
  writeAt?(bytes: Uint8Array, position: number): void;
  /** Pushes buffered bytes to the OS (a no-op for unbuffered writables). */
  flush(): void;
  /** Makes everything written so far durable (fsync). */
  sync(): void;
  close(): void;
  /**
   * After `close`: throws `IO_ERROR` unless the stored bytes end with the MCAP magic, as VLink re-reads them after
   * close, so a close that did not reach the storage is an error. Optional: a writable that cannot read back skips it.
   */
  verifyMagicEnd?(): void;
}
