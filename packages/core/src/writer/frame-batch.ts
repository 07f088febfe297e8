import type { SchemaData } from '../model/frame.js';
import {
  FIELDS,
  F_ACTION,
  F_CHUNK,
  F_LENGTH,
  F_OFFSET,
  F_PUBLISH,
  F_SCHEMA,
  F_SER,
  F_TS,
  F_URL,
  type BatchMessage,
  type ChunkRef,
} from '../writer-worker/protocol.js';
import { sharedCopiesNeedAlignment } from '../runtime/shared-copies.js';
import { capacityFor, type Slab, type SlabPool } from './slab-pool.js';

/** Payloads up to this size are copied into the batch arena; larger ones travel in a slab of their own. */
export const SMALL_PAYLOAD = 64 * 1024;
/**
 * With `transfer`, a payload that owns its whole ArrayBuffer moves from this size on instead of being copied into
 * the arena: copying 16 KiB costs about what handing a buffer over does, and 64 KiB already costs 5 µs or more.
 */
export const TRANSFER_MIN = 16 * 1024;
// Arena sizes step by 4× (16 KiB, 64 KiB, 256 KiB, 1 MiB): few sizes, so the slab pool nearly always has one idle.
const ARENA_MIN = 16 * 1024;
const ARENA_MAX = 1024 * 1024;
const META_MIN = 64;

/**
 * Collects frames for one postMessage. The batch owns every byte it hands over: small payloads are copied into an
 * arena slab (one cheap copy), large ones once into a slab of their own, or, with `transfer`, moved without a copy
 * when the caller's view covers its whole ArrayBuffer (which the caller then loses: transferring detaches it). Slabs
 * come from a `SlabPool` the worker's acks refill. Arena sizes adapt: they grow when a batch fills one and shrink
 * when mostly empty, so a steady stream of tiny frames does not tie up a megabyte per batch.
 */
export class BatchBuilder {
  count = 0;
  bytes = 0;
  commit = false;
  private meta: Float64Array;
  private metaSlab: Slab;
  private chunks: ChunkRef[] = [];
  private transfer: ArrayBuffer[] = [];
  private arena: Uint8Array | undefined;
  private arenaUsed = 0;
  private arenaSize = ARENA_MIN;
  private arenaChunk = -1;
  private strings: string[] = [];
  private schemas: SchemaData[] = [];
  private durable: number[] = [];

  constructor(private readonly pool: SlabPool) {
    this.metaSlab = this.newMeta(META_MIN);
    this.meta = new Float64Array(this.metaSlab.buffer);
  }

  add(
    timestamp: number,
    url: number,
    ser: number,
    schemaType: number,
    action: number,
    data: Uint8Array,
    transfer: boolean,
    /** The frame's publish time, undefined for none (stored as NaN). */
    publishTime: number | undefined,
  ): number {
    const index = this.count;
    if ((index + 1) * FIELDS > this.meta.length) this.growMeta();
    const length = data.length;
    let chunk: number;
    let offset = 0;
    if (transfer && length >= TRANSFER_MIN && this.canTransfer(data)) {
      chunk = this.chunks.length;
      const buffer = data.buffer as ArrayBuffer;
      this.transfer.push(buffer);
      this.chunks.push(buffer);
    } else if (length <= SMALL_PAYLOAD) {
      if (!this.arena || this.arenaUsed + length > this.arena.length) this.newArena(length);
      copyIntoShared(this.arena!, this.arenaUsed, data);
      chunk = this.arenaChunk;
      offset = this.arenaUsed;
      // The next payload starts at a multiple of 8. V8 copies into shared memory with relaxed atomics, a word at a
      // time only where source and target are 8-aligned, else byte by byte: at a multiple of 4 only, half the
      // payloads of 100 B took 40 ns to add instead of 28 (Node 20; Deno 31 → 25). The worker copies small
      // payloads out a 32-bit word at a time (`BatchPayloads`), which needs a multiple of 4.
      this.arenaUsed = (this.arenaUsed + length + 7) & ~7;
    } else {
      chunk = this.chunks.length;
      this.copyLarge(data);
    }
    const m = this.meta;
    const base = index * FIELDS;
    m[base + F_TS] = timestamp;
    m[base + F_URL] = url;
    m[base + F_SER] = ser;
    m[base + F_SCHEMA] = schemaType;
    m[base + F_ACTION] = action;
    m[base + F_CHUNK] = chunk;
    m[base + F_OFFSET] = offset;
    m[base + F_LENGTH] = length;
    // Not a default parameter: that cost 8 ns a frame of this method's 54 (hand-measured, Node 20, 64 B frames).
    m[base + F_PUBLISH] = publishTime === undefined ? Number.NaN : publishTime;
    this.count++;
    this.bytes += length;
    return index;
  }

  addString(value: string): void {
    this.strings.push(value);
  }

  addSchema(schema: SchemaData): void {
    this.schemas.push(schema);
  }

  markDurable(index: number, id: number): void {
    this.durable.push(index, id);
    this.commit = true;
  }

  /** True when there is anything to send (a durable commit request with no frame still counts). */
  get pending(): boolean {
    return this.count > 0 || this.strings.length > 0 || this.schemas.length > 0 || this.commit;
  }

  /** Hands the batch over and resets the builder; the second element is the transfer list. */
  take(seq: number): [BatchMessage, ArrayBuffer[]] {
    if (this.arena && this.arenaUsed * 16 < this.arenaSize) this.arenaSize = Math.max(ARENA_MIN, this.arenaSize >> 2);
    const meta = this.ref(this.metaSlab);
    const message: BatchMessage = {
      k: 'batch',
      seq,
      count: this.count,
      bytes: this.bytes,
      meta,
      chunks: this.chunks,
      strings: this.strings,
      schemas: this.schemas,
      durable: this.durable,
      commit: this.commit,
      slabs: this.pool.takeAnnouncements(),
      forget: this.pool.takeForgotten(),
    };
    const transfer = this.transfer;
    // Size the next batch's table for what this one needed (a power of two, so pooled tables fit again).
    this.metaSlab = this.newMeta(
      Math.min(4096, Math.max(META_MIN, 2 ** Math.ceil(Math.log2(Math.max(1, this.count))))),
    );
    this.meta = new Float64Array(this.metaSlab.buffer);
    this.chunks = [];
    this.transfer = [];
    this.arena = undefined;
    this.arenaUsed = 0;
    this.arenaChunk = -1;
    this.strings = [];
    this.schemas = [];
    this.durable = [];
    this.count = 0;
    this.bytes = 0;
    this.commit = false;
    return [message, transfer];
  }

  /** A shared slab travels as its id; a plain buffer travels itself, by transfer. */
  private ref(slab: Slab): ChunkRef {
    if (slab.id >= 0) return slab.id;
    this.transfer.push(slab.buffer as ArrayBuffer);
    return slab.buffer as ArrayBuffer;
  }

  private newArena(atLeast: number): void {
    // A batch that overflowed its arena gets bigger ones from now on (fewer, larger hand-overs).
    if (this.arena) this.arenaSize = Math.min(ARENA_MAX, this.arenaSize * 4);
    const slab = this.pool.take(capacityFor(Math.max(this.arenaSize, atLeast)));
    this.arenaChunk = this.chunks.length;
    this.chunks.push(this.ref(slab));
    this.arena = new Uint8Array(slab.buffer);
    this.arenaUsed = 0;
  }

  private newMeta(frames: number): Slab {
    return this.pool.take(capacityFor(frames * FIELDS * 8));
  }

  private growMeta(): void {
    const slab = this.newMeta((this.meta.length / FIELDS) * 2);
    const next = new Float64Array(slab.buffer);
    next.set(this.meta);
    if (this.metaSlab.id >= 0) this.pool.release(this.metaSlab.id);
    this.metaSlab = slab;
    this.meta = next;
  }

  /** A view that covers a whole plain ArrayBuffer not already handed over in this batch. */
  private canTransfer(data: Uint8Array): boolean {
    const buffer = data.buffer;
    return (
      data.byteOffset === 0 &&
      data.byteLength === buffer.byteLength &&
      buffer instanceof ArrayBuffer &&
      (this.transfer.length === 0 || !this.transfer.includes(buffer))
    );
  }

  private copyLarge(data: Uint8Array): void {
    const slab = this.pool.take(capacityFor(data.byteLength));
    copyIntoShared(new Uint8Array(slab.buffer, 0, data.byteLength), 0, data);
    this.chunks.push(this.ref(slab));
  }
}

/** Pieces a misaligned payload is copied in (`copyIntoShared`). */
const STAGE_PIECE = 64 * 1024;
let stage: Uint8Array | undefined;

/**
 * `target.set(data, at)`, where `target` may be shared memory, which V8 copies into a word at a time only where
 * source and target are aligned alike (`sharedCopiesNeedAlignment`): the slabs are, a caller's `subarray` (a frame
 * a reader yields out of its chunk, a slice of a network buffer) often is not, and 16 KiB from an odd offset took
 * 3.5 µs instead of 0.65 (Node 20, `BatchBuilder.add`). A misaligned payload from 256 B on therefore goes through an
 * aligned plain buffer, 64 KiB at a time: two fast copies instead of a slow one (0.88 µs; 1 MiB 278 → 73 µs).
 */
function copyIntoShared(target: Uint8Array, at: number, data: Uint8Array): void {
  const length = data.length;
  if (length < 256 || !sharedCopiesNeedAlignment || ((target.byteOffset + at - data.byteOffset) & 7) === 0) {
    target.set(data, at);
    return;
  }
  stage ??= new Uint8Array(STAGE_PIECE);
  for (let done = 0; done < length; done += STAGE_PIECE) {
    const piece = Math.min(STAGE_PIECE, length - done);
    stage.set(data.subarray(done, done + piece));
    target.set(piece === STAGE_PIECE ? stage : stage.subarray(0, piece), at + done);
  }
}

/**
 * `message` with its frames taken out: what goes to the worker when a batch cannot be posted (a payload buffer was
 * detached). The frames are lost, but the names and schemas the batch introduced still go over, or later ids would
 * point at the wrong strings.
 */
export function withoutFrames(message: BatchMessage): BatchMessage {
  return { ...message, count: 0, bytes: 0, meta: new ArrayBuffer(0), chunks: [], durable: [], commit: false };
}

// --- the worker's side -------------------------------------------------------------------------------------------
// How the writer worker reads the payloads of a batch, beside how they were laid out: the word-at-a-time copy relies
// on the arena layout above (every payload starts at a multiple of 8, so of 4).

/**
 * Payloads shorter than this are handed to the backend in a reused view (see `BatchPayloads`); longer ones in a view
 * of their own, whose cost is then small beside the bytes.
 */
export const REUSED_VIEW_MAX = 1024;

/**
 * The payload views of the batch being written on the writer worker. A view per frame (`new Uint8Array(buffer, offset,
 * length)`) costs an allocation, and at 64 B those allocations and the collections they cause were most of what the
 * worker spent per frame beside the backend's own write (bench/integrity.bench.mjs awaitWrite). A small payload is
 * therefore copied, a 32-bit word at a time (the producer starts every payload in an arena at a multiple of 8), into
 * a scratch buffer, and handed over in a view of that buffer kept per length. `BackendWriter.write` may not keep a
 * frame's data once it returns, so the next frame may reuse it.
 *
 * Larger arena payloads are copied whole into a staging buffer that is not shared (where `sharedCopiesNeedAlignment`).
 * A backend that copies a payload (the MCAP chunk builder does) would otherwise copy out of shared memory, a word at
 * a time only where source and target are aligned alike and byte by byte elsewhere: 16 KiB at an odd position of a
 * chunk took 3.4 µs instead of 0.46 (Node 20; Deno alike). From an aligned offset to the start of the staging buffer
 * the copy goes a word at a time, and the backend's own copy then is a plain one.
 */
export class BatchPayloads {
  private chunks: ArrayBufferLike[] = [];
  /** Per chunk of the batch: a word view of it, made when its first small payload is read. */
  private readonly words: Array<Int32Array | undefined> = [];
  private readonly scratch = new ArrayBuffer(REUSED_VIEW_MAX);
  private readonly scratchWords = new Int32Array(this.scratch);
  /** Views of the scratch buffer by length. */
  private readonly views: Array<Uint8Array | undefined> = [];
  /** Arena payloads from `REUSED_VIEW_MAX` on, out of shared memory (allocated at the first). */
  private staging: Uint8Array | undefined;

  /** A new batch: `chunks` are its arenas and large payloads, by index. */
  begin(chunks: ArrayBufferLike[]): void {
    this.chunks = chunks;
    this.words.length = 0;
  }

  /** The payload of `length` bytes at `offset` of chunk `index`; valid until the next call. */
  view(index: number, offset: number, length: number): Uint8Array {
    // The word view of the chunk first: its length bounds the copy without asking the (shared) buffer its byteLength,
    // a getter call per frame that cost about 5 ns of the worker's 40 ns per 64 B frame (Node, the loop alone).
    let source = this.words[index];
    if (source === undefined) {
      const chunk = this.chunks[index]!;
      source = this.words[index] = new Int32Array(chunk, 0, chunk.byteLength >> 2);
    }
    const from = offset >> 2;
    const words = (length + 3) >> 2;
    // A whole-word copy reads up to 3 bytes past the payload: only where the chunk has them.
    if (length >= REUSED_VIEW_MAX || (offset & 3) !== 0 || from + words > source.length)
      return this.larger(this.chunks[index]!, offset, length);
    const target = this.scratchWords;
    // Four words a step: on Node 20's V8 a plain loop over the shared array took about 1 ns a word (64 B: 17 ns, this
    // 8; Bun 9.5 → 8.3; Deno's newer V8 7.6 → 9.8; hand-measured, 2026-12-06). The writer worker's code run on one
    // thread against batches built beforehand: 167–173 → 151–161 ms per million 64 B frames (Node).
    let i = 0;
    for (; i + 4 <= words; i += 4) {
      const j = from + i;
      target[i] = source[j]!;
      target[i + 1] = source[j + 1]!;
      target[i + 2] = source[j + 2]!;
      target[i + 3] = source[j + 3]!;
    }
    for (; i < words; i++) target[i] = source[from + i]!;
    let view = this.views[length];
    if (view === undefined) view = this.views[length] = new Uint8Array(this.scratch, 0, length);
    return view;
  }

  /** A payload `view` does not copy by words: staged when it is an aligned arena payload in shared memory. */
  private larger(chunk: ArrayBufferLike, offset: number, length: number): Uint8Array {
    const payload = new Uint8Array(chunk, offset, length);
    if (length > SMALL_PAYLOAD || (offset & 7) !== 0 || !sharedCopiesNeedAlignment || !isShared(chunk)) return payload;
    this.staging ??= new Uint8Array(SMALL_PAYLOAD);
    this.staging.set(payload);
    return this.staging.subarray(0, length);
  }
}

const isShared = (buffer: ArrayBufferLike): boolean =>
  typeof SharedArrayBuffer === 'function' && buffer instanceof SharedArrayBuffer;
