/**
 * The shared memory between a `RingWritable` (the writer's thread) and its I/O thread: a byte ring, and a control
 * block that both sides poll and wait on with `Atomics`, so neither needs the other's event loop (the writer's thread
 * spends its time in synchronous backend calls, where no message would ever be read).
 *
 * `HEAD` counts bytes put into the ring, `TAIL` bytes written to the file, both modulo 2^32 as Int32 (so
 * `(head - tail) | 0` is the number of bytes in flight; the ring is far below 2 GiB). The file is an append-only
 * stream: ring byte k goes to file offset k.
 */
export const HEAD = 0;
export const TAIL = 1;
export const STATE = 2;
export const ERROR_LENGTH = 3;
/** Set to 1 by the I/O thread once it has the file open. */
export const READY = 4;
/**
 * Bumped by the writer after every change the I/O thread must see (new bytes, a stop request). The thread reads it
 * before looking at `HEAD` and `STATE` and sleeps only while it is unchanged, so no wake-up is lost and an idle thread
 * costs nothing.
 */
export const SIGNAL = 5;
const CONTROL_INTS = 6;
const ERROR_BYTES = 1024;
const ERROR_OFFSET = 8 * 4;

export const RUNNING = 0;
/** Set by the writer: write what is in the ring, then close the file and end. */
export const STOPPING = 1;
/** Set by the I/O thread: a write failed; the message is in `error`. Nothing more is written. */
export const FAILED = 2;
/** Set by the I/O thread after its last write and close. */
export const STOPPED = 3;

export interface ByteRing {
  readonly control: Int32Array;
  readonly bytes: Uint8Array;
  readonly error: Uint8Array;
}

/** What the I/O thread is started with (structured-cloned; the SharedArrayBuffers are shared, not copied). */
export interface RingThreadData {
  readonly path: string;
  readonly control: SharedArrayBuffer;
  readonly bytes: SharedArrayBuffer;
}

export function createByteRing(capacity: number): { ring: ByteRing; control: SharedArrayBuffer; bytes: SharedArrayBuffer } {
  const control = new SharedArrayBuffer(ERROR_OFFSET + ERROR_BYTES);
  const bytes = new SharedArrayBuffer(capacity);
  return { ring: openByteRing(control, bytes), control, bytes };
}

export function openByteRing(control: SharedArrayBuffer, bytes: SharedArrayBuffer): ByteRing {
  return {
    control: new Int32Array(control, 0, CONTROL_INTS),
    bytes: new Uint8Array(bytes),
    error: new Uint8Array(control, ERROR_OFFSET, ERROR_BYTES),
  };
}

/**
 * Marks the ring failed with `message` (truncated to what fits) for the writer to throw, and wakes a writer waiting on
 * `TAIL`. The first failure is the one kept.
 */
export function failRing(ring: ByteRing, message: string): void {
  if (Atomics.load(ring.control, STATE) === FAILED) return;
  const encoded = new TextEncoder().encode(message).subarray(0, ring.error.length);
  // TextDecoder refuses views on shared memory, so the message is copied in and out of plain buffers.
  ring.error.set(encoded);
  Atomics.store(ring.control, ERROR_LENGTH, encoded.length);
  Atomics.store(ring.control, STATE, FAILED);
  Atomics.notify(ring.control, TAIL);
}

export function ringError(ring: ByteRing): string {
  const length = Atomics.load(ring.control, ERROR_LENGTH);
  return new TextDecoder().decode(ring.error.slice(0, length));
}
