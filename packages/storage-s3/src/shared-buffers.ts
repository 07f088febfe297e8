/**
 * The shared buffers a helper thread's answers go into where they travel through shared memory (Deno, see
 * `range-helper.ts`), reused: writing into a fresh buffer costs page faults, about 15 ms for 32 MiB on Deno against
 * 2 ms into one used before (hand-measured), as much as fetching it. A buffer is reused only once its answer has been
 * copied out and nothing can still write into it: a `get` whose answer never came, or a prefetch dropped while under
 * way, gives its buffer up.
 *
 * Each source has two buffers for its prefetches, so that the next prefetch can be written into one while the
 * answer of the last is copied out of the other (`ask`'s `beforeCopy`).
 */
export class SharedBuffers {
  /** The buffer of the `get`s (one at a time: the asking thread waits for each). */
  private get: SharedArrayBuffer | undefined;
  /** Each source's prefetch under way (`pending`) and its buffer free for the next one (`spare`). */
  private readonly sources = new Map<number, { pending?: SharedArrayBuffer; spare?: SharedArrayBuffer }>();

  /** A buffer for a `get` of `length` bytes. */
  forGet(length: number): SharedArrayBuffer {
    if (!this.get || this.get.byteLength < length) this.get = new SharedArrayBuffer(length);
    return this.get;
  }

  /** The `get`'s answer did not come: the helper thread may still write into its buffer. */
  abandonGet(): void {
    this.get = undefined;
  }

  /** A buffer for a source's prefetch of `length` bytes: its spare if large enough (never one being copied out). */
  forPrefetch(source: number, length: number): SharedArrayBuffer {
    const entry = this.sources.get(source) ?? {};
    this.sources.set(source, entry);
    const spare = entry.spare;
    entry.spare = undefined;
    entry.pending = spare && spare.byteLength >= length ? spare : new SharedArrayBuffer(length);
    return entry.pending;
  }

  /** The buffer of the source's prefetch being taken, not reused until `taken`. */
  take(source: number): SharedArrayBuffer | undefined {
    const entry = this.sources.get(source);
    const pending = entry?.pending;
    if (entry) entry.pending = undefined;
    return pending;
  }

  /** A taken prefetch's answer is copied out: its buffer is the source's spare. */
  taken(source: number, buffer: SharedArrayBuffer): void {
    const entry = this.sources.get(source);
    if (entry && (!entry.spare || entry.spare.byteLength < buffer.byteLength)) entry.spare = buffer;
  }

  /** The source's prefetch is dropped (it may still be written into) or the source closed: its buffers go. */
  drop(source: number): void {
    this.sources.delete(source);
  }
}
