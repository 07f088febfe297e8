import { BagError } from '@vlink/bag-core';
import { HelperThread, unrefTimer } from '@vlink/bag-core/internal';
import { createThreadControl } from '@vlink/bag-core/internal/thread-control';
import type { CompressedChunk, PipelinedCompressor } from './pipelined-compressor.js';

/** Chunks that can be in the compressor at once: one compressed while the result of the one before is collected. */
export const SLOTS = 2; // a power of two: job k uses slot k & (SLOTS − 1)
/** `extra` ints of the control block per job slot. */
const FIELDS = 6;
/** The chunk's length (writer → thread). */
export const lengthAt = (slot: number): number => slot * FIELDS;
/** The zstd level (writer → thread). */
export const levelAt = (slot: number): number => slot * FIELDS + 1;
/** The compressed length, or −1 when the result did not fit into the slot's output (thread → writer). */
export const resultAt = (slot: number): number => slot * FIELDS + 2;
/** 1 when the writer asks for the CRCs of the records and of the result, else 0 (writer → thread). */
export const crcsWantedAt = (slot: number): number => slot * FIELDS + 3;
/** The CRC-32 of the records, as an int32 (thread → writer, when asked for). */
export const recordsCrcAt = (slot: number): number => slot * FIELDS + 4;
/** The CRC-32 of the compressed bytes, as an int32 (thread → writer, when asked for and they fit). */
export const compressedCrcAt = (slot: number): number => slot * FIELDS + 5;

/**
 * How long a compressor whose file closed cleanly waits for the next file of its thread before its thread ends. A
 * compressor thread takes 0.1 s to start, and 0.6 s when a worker starts it on Deno (hand-measured), while a recording
 * of a few hundred MiB of 1 MiB frames takes about 0.5 s: every file a writer opened (each split segment too)
 * compressed alone on the writer's thread until then. As with the writer worker that holds it (idle-writers.ts in
 * core), one is kept per thread: its four slots of 1.25 × the chunk size stay allocated meanwhile.
 */
const IDLE_MS = 10_000;

/** The compressor kept for the next file of this thread, if any, and the timer that ends it. */
let parked: { compressor: ThreadedCompressor; timer: ReturnType<typeof setTimeout> } | undefined;
/** The compressor this thread lends to the files written on the caller's thread ({@link ThreadedCompressor.lend}). */
let lent: ThreadedCompressor | undefined;

/** What the compressor thread is started with (structured-cloned; the SharedArrayBuffers are shared, not copied). */
export interface CompressorThreadData {
  readonly control: SharedArrayBuffer;
  /** Per slot: the records to compress, and room for the result. */
  readonly inputs: SharedArrayBuffer[];
  readonly outputs: SharedArrayBuffer[];
}

/**
 * zstd compression of chunks on a thread of its own (`compressor-thread.ts`), so the writer's thread copies the next
 * chunk's frames together while the last one is compressed. Two slots: a chunk is handed over before the result of
 * the one before is collected, so the thread goes straight from one chunk to the next while the writer waits for and
 * writes the earlier result. Chunks larger than `capacity`, and chunks that come while the thread is still starting,
 * are refused (`start` → false) and compressed by the caller. It blocks its caller while waiting (`finish`): only
 * where waiting on shared memory is allowed (`openChunkCompressor`).
 */
export class ThreadedCompressor implements PipelinedCompressor {
  readonly depth = SLOTS;
  private readonly inputs: Uint8Array[];
  private readonly outputs: Uint8Array[];
  private readonly extra: Int32Array;
  private readonly thread: HelperThread;
  /** Jobs collected by `finish` so far (modulo 2^32, as the thread's counters). */
  private collected = 0;
  private closed = false;

  /**
   * A compressor for the file `file`: the one the last file of this thread left (see {@link IDLE_MS}) when it has
   * this capacity, its thread started or starting already; else a new one.
   */
  static open(capacity: number, file?: string): ThreadedCompressor {
    const kept = parked;
    if (kept !== undefined && (kept.compressor.capacity === capacity || kept.compressor.thread.failed)) {
      parked = undefined;
      clearTimeout(kept.timer);
      // A thread that failed while it waited (only its state says so) is ended, never handed out.
      if (kept.compressor.thread.failed) kept.compressor.thread.stop();
      else {
        kept.compressor.closed = false;
        kept.compressor.file = file;
        return kept.compressor;
      }
    }
    return new ThreadedCompressor(capacity, file);
  }

  /**
   * The compressor of a file written on the caller's thread (`syncMode`), or undefined while another such file of
   * this thread has it: one per thread, lent to one file at a time, so a process that opens many sync recordings at
   * once starts one thread and one set of buffers, not one per file (four of 1.25 × the chunk size: 20 MiB for 4 MiB
   * chunks); the files without it compress on their own thread, as without a compressor. It is `open`'s compressor,
   * kept meanwhile for the next file like any other once the file closes.
   */
  static lend(capacity: number, file?: string): ThreadedCompressor | undefined {
    if (lent !== undefined) return undefined;
    lent = ThreadedCompressor.open(capacity, file);
    return lent;
  }

  constructor(
    readonly capacity: number,
    /** Named in the errors of its thread: the file it works for now. */
    private file?: string,
  ) {
    const { shared, control } = createThreadControl();
    const data: CompressorThreadData = {
      control: shared,
      inputs: Array.from({ length: SLOTS }, () => new SharedArrayBuffer(capacity)),
      outputs: Array.from({ length: SLOTS }, () => new SharedArrayBuffer(capacity)),
    };
    this.inputs = data.inputs.map((b) => new Uint8Array(b));
    this.outputs = data.outputs.map((b) => new Uint8Array(b));
    this.extra = control.extra;
    try {
      this.thread = new HelperThread({
        module: new URL('./compressor-thread.js', import.meta.url),
        control,
        workerData: data,
        failure: (message) => new BagError('INTERNAL', `zstd compression failed: ${message}`, { file: this.file }),
      });
    } catch (error) {
      throw BagError.wrap(error, 'INTERNAL', 'cannot start the compressor thread', { file: this.file });
    }
  }

  /** Whether the thread has started: until then `start` takes nothing (the writer compresses on its own thread). */
  get ready(): boolean {
    return this.thread.ready;
  }

  start(records: Uint8Array, level: number, crcs = false): boolean {
    if (this.closed) throw new BagError('CLOSED', 'compressor is closed');
    if (records.length > this.capacity) return false;
    const job = this.thread.handed;
    if (((job - this.collected) | 0) >= SLOTS) throw new BagError('INTERNAL', 'compressor slots full: finish() first');
    this.thread.throwIfFailed();
    // A thread still starting would make the writer wait for it (0.6 s for one started by a worker on Deno, where a
    // whole recording of 300,000 small frames takes 0.1 s).
    if (!this.thread.ready) return false;
    // The slot's last job was collected by `finish`, so the thread is done with its buffers.
    const slot = job & (SLOTS - 1);
    this.inputs[slot]!.set(records);
    Atomics.store(this.extra, lengthAt(slot), records.length);
    Atomics.store(this.extra, levelAt(slot), level);
    Atomics.store(this.extra, crcsWantedAt(slot), crcs ? 1 : 0);
    this.thread.handOver(1);
    return true;
  }

  finish(): CompressedChunk {
    const job = this.collected;
    if (job === this.thread.handed) throw new BagError('INTERNAL', 'no chunk in the compressor');
    this.thread.waitFor((tail) => ((tail - job) | 0) > 0);
    this.collected = (job + 1) | 0;
    const slot = job & (SLOTS - 1);
    const result = Atomics.load(this.extra, resultAt(slot));
    const done: CompressedChunk = {
      records: this.inputs[slot]!.subarray(0, Atomics.load(this.extra, lengthAt(slot))),
      compressed: result < 0 ? undefined : this.outputs[slot]!.subarray(0, result),
    };
    if (Atomics.load(this.extra, crcsWantedAt(slot)) === 1) {
      done.recordsCrc = Atomics.load(this.extra, recordsCrcAt(slot)) >>> 0;
      if (result >= 0) done.compressedCrc = Atomics.load(this.extra, compressedCrcAt(slot)) >>> 0;
    }
    return done;
  }

  finished(): boolean {
    return this.collected !== this.thread.handed && ((this.thread.done - this.collected) | 0) > 0;
  }

  /**
   * Ends its work for this file. With nothing in flight and its thread sound, it is kept for the next file of this
   * thread ({@link open}), replacing any kept before; otherwise, and once {@link IDLE_MS} pass unused, its thread ends.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (lent === this) lent = undefined;
    if (this.collected !== this.thread.handed || this.thread.failed) {
      this.thread.stop();
      return;
    }
    const before = parked;
    const timer = setTimeout(() => {
      if (parked?.compressor !== this) return;
      parked = undefined;
      this.thread.stop();
    }, IDLE_MS);
    unrefTimer(timer);
    parked = { compressor: this, timer };
    if (before !== undefined) {
      clearTimeout(before.timer);
      before.compressor.thread.stop();
    }
  }
}
