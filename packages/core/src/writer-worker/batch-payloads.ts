/**
 * Payloads shorter than this are handed to the backend in a reused view (see `BatchPayloads`); longer ones in a view
 * of their own, whose cost is then small beside the bytes.
 */
export const REUSED_VIEW_MAX = 1024;

/**
 * The payload views of the batch being written on the writer worker. A view per frame (`new Uint8Array(buffer, offset,
 * length)`) costs an allocation, and at 64 B those allocations and the collections they cause were most of what the
 * worker spent per frame beside the backend's own write (bench/integrity.bench.mjs awaitWrite). A small payload is
 * therefore copied, a 32-bit word at a time (the producer starts every payload in an arena at a multiple of 4), into
 * a scratch buffer, and handed over in a view of that buffer kept per length. `BackendWriter.write` may not keep a
 * frame's data once it returns, so the next frame may reuse it.
 */
export class BatchPayloads {
  private chunks: ArrayBufferLike[] = [];
  /** Per chunk of the batch: a word view of it, made when its first small payload is read. */
  private readonly words: Array<Int32Array | undefined> = [];
  private readonly scratch = new ArrayBuffer(REUSED_VIEW_MAX);
  private readonly scratchWords = new Int32Array(this.scratch);
  /** Views of the scratch buffer by length. */
  private readonly views: Array<Uint8Array | undefined> = [];

  /** A new batch: `chunks` are its arenas and large payloads, by index. */
  begin(chunks: ArrayBufferLike[]): void {
    this.chunks = chunks;
    this.words.length = 0;
  }

  /** The payload of `length` bytes at `offset` of chunk `index`; valid until the next call. */
  view(index: number, offset: number, length: number): Uint8Array {
    const chunk = this.chunks[index]!;
    // A whole-word copy reads up to 3 bytes past the payload: only where the chunk has them.
    const words = (length + 3) >> 2;
    if (length >= REUSED_VIEW_MAX || (offset & 3) !== 0 || offset + words * 4 > chunk.byteLength)
      return new Uint8Array(chunk, offset, length);
    let source = this.words[index];
    if (source === undefined) source = this.words[index] = new Int32Array(chunk, 0, chunk.byteLength >> 2);
    const target = this.scratchWords;
    const from = offset >> 2;
    for (let i = 0; i < words; i++) target[i] = source[from + i]!;
    let view = this.views[length];
    if (view === undefined) view = this.views[length] = new Uint8Array(this.scratch, 0, length);
    return view;
  }
}
