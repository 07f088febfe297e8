/**
 * The shared memory between a thread that hands work off (the writer's thread) and a helper thread of its own (the
 * `.vcap` chunk compressor of `@vlink/bag-mcap`): a control block both sides poll and wait on with `Atomics`, so neither
 * needs the other's event loop (the writer's thread spends its time in synchronous backend calls, where no message
 * would ever be read).
 *
 * `HEAD` counts work handed over, `TAIL` work done (chunks, for the compressor), both modulo
 * 2^32 as Int32, so `(head - tail) | 0` is what is in flight.
 */
export const HEAD = 0;
export const TAIL = 1;
export const STATE = 2;
const ERROR_LENGTH = 3;
/** Set to 1 by the helper thread once it is ready for work (file open, codec loaded). */
export const READY = 4;
/**
 * Bumped by the writer after every change the helper must see (new work, a stop request). The helper reads it before
 * looking at `HEAD` and `STATE` and sleeps only while it is unchanged, so no wake-up is lost and an idle helper costs
 * nothing.
 */
export const SIGNAL = 5;
/** Slots from here on are the user's (`extra`). */
const FIRST_EXTRA = 6;
// 26 extra ints: the compressor passes six per slot, two slots.
const CONTROL_INTS = 32;
const ERROR_OFFSET = CONTROL_INTS * 4;
const ERROR_BYTES = 1024;

export const RUNNING = 0;
/** Set by the writer: finish the work handed over, then end. */
export const STOPPING = 1;
/** Set by the helper: work failed; the message is in `error`. Nothing more is done. */
export const FAILED = 2;
/** Set by the helper after its last piece of work. */
export const STOPPED = 3;

export interface ThreadControl {
  readonly control: Int32Array;
  /** `FIRST_EXTRA`… : slots for what a particular helper needs to pass (lengths, levels). */
  readonly extra: Int32Array;
  readonly error: Uint8Array;
}

export function createThreadControl(): { shared: SharedArrayBuffer; control: ThreadControl } {
  const shared = new SharedArrayBuffer(ERROR_OFFSET + ERROR_BYTES);
  return { shared, control: openThreadControl(shared) };
}

export function openThreadControl(shared: SharedArrayBuffer): ThreadControl {
  return {
    control: new Int32Array(shared, 0, CONTROL_INTS),
    extra: new Int32Array(shared, FIRST_EXTRA * 4, CONTROL_INTS - FIRST_EXTRA),
    error: new Uint8Array(shared, ERROR_OFFSET, ERROR_BYTES),
  };
}

/**
 * Marks the helper failed with `message` (truncated to what fits) for the writer to throw, and wakes a writer waiting
 * on `TAIL`. The first failure is the one kept.
 */
export function failThread(t: ThreadControl, message: string): void {
  if (Atomics.load(t.control, STATE) === FAILED) return;
  const encoded = new TextEncoder().encode(message).subarray(0, t.error.length);
  // TextDecoder refuses views on shared memory, so the message is copied in and out of plain buffers.
  t.error.set(encoded);
  Atomics.store(t.control, ERROR_LENGTH, encoded.length);
  Atomics.store(t.control, STATE, FAILED);
  Atomics.notify(t.control, TAIL);
}

export function threadError(t: ThreadControl): string {
  const length = Atomics.load(t.control, ERROR_LENGTH);
  return new TextDecoder().decode(t.error.slice(0, length));
}

/**
 * The helper's side: blocks until there is work beyond `tail` and returns `HEAD`, or returns undefined once the writer
 * asked it to stop and everything handed over is done.
 */
export function waitForWork(t: ThreadControl, tail: number): number | undefined {
  const { control } = t;
  for (;;) {
    // Read before HEAD and STATE: whatever the writer changes after this line also changes SIGNAL, so the wait below
    // returns at once instead of missing it.
    const signal = Atomics.load(control, SIGNAL);
    const head = Atomics.load(control, HEAD);
    if (head !== tail) return head;
    if (Atomics.load(control, STATE) !== RUNNING) return undefined;
    Atomics.wait(control, SIGNAL, signal);
  }
}

/** The helper's side: `tail` units of work are done. */
export function reportDone(t: ThreadControl, tail: number): void {
  Atomics.store(t.control, TAIL, tail);
  Atomics.notify(t.control, TAIL);
}
