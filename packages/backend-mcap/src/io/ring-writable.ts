import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { BagError } from '@vlink/bag-core';
import {
  createByteRing, FAILED, HEAD, READY, failRing, ringError, RUNNING, SIGNAL, STATE, STOPPED, STOPPING, TAIL, type ByteRing, type RingThreadData,
} from './byte-ring.js';
import type { Writable } from './writable.js';

/** How long one wait for the I/O thread lasts before its state is looked at again. */
const WAIT_SLICE_MS = 100;
/**
 * A thread that has not even opened the file by then is taken as never started (its module failed to load, which
 * would be reported on an event loop this thread is not running). A started thread is waited for however slow the
 * disk: slow is not failed.
 */
const START_TIMEOUT_MS = 30_000;

/**
 * A file writable whose appends are written by a thread of their own: `write` copies the bytes into a shared ring
 * and returns, so the writer's thread compresses the next chunk while the last one goes to the OS (in a CPU profile
 * taken by hand of an async BagWriter's thread at 1 MiB zstd frames, `writev` into the page cache was about 40 % of
 * its time; bench/writer.bench.mjs `throughput` measures the result). Everything that needs the
 * bytes in the file first — `flush`, `sync` (fsync), `writeAt`, `close` — waits until the ring is empty, so commits
 * keep their meaning: a durable push is on disk when it resolves. A write error in the I/O thread is thrown, as an
 * `IO_ERROR`, by the next call. Blocking waits are only allowed because this runs on the writer's own thread
 * (`RecordingContext.writerThread`); on a caller's thread the plain `FileWritable` is used.
 *
 * The ring holds at most one chunk's bytes beyond what the OS has (`openFileWritable` sizes it to the chunk size),
 * which is what a crash can lose on top of the chunk being filled. The thread's file is an append-only stream (ring
 * byte k goes to file offset k); `writeAt` first waits for the ring to empty, so a patch never races an append.
 */
export class RingWritable implements Writable {
  private readonly fd: number;
  private readonly ring: ByteRing;
  private readonly capacity: number;
  private readonly thread: Worker;
  private head = 0;
  private pos = 0;
  private closed = false;

  constructor(readonly path: string, capacity: number) {
    try {
      // 'w' truncates: an existing bag is replaced by the new recording. The I/O thread opens the same file.
      this.fd = openSync(path, 'w');
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'cannot create bag', { file: path });
    }
    const { ring, control, bytes } = createByteRing(capacity);
    this.ring = ring;
    this.capacity = capacity;
    const data: RingThreadData = { path, control, bytes };
    try {
      this.thread = new Worker(new URL('./ring-io-thread.js', import.meta.url), { workerData: data });
    } catch (error) {
      closeSync(this.fd);
      throw BagError.wrap(error, 'IO_ERROR', 'cannot start the file I/O thread', { file: path });
    }
    // The thread ends by itself after `close`; it must never keep a process alive.
    this.thread.unref();
    // A thread that dies outside its own try (its module failed to load) is reported here, once this thread's event
    // loop runs; the next call then throws it. Without a listener the error would take the whole process down.
    this.thread.on('error', (error: unknown) => {
      if (Atomics.load(ring.control, STATE) === RUNNING) failRing(ring, error instanceof Error ? error.message : String(error));
    });
  }

  position(): number {
    return this.pos;
  }

  write(bytes: Uint8Array): void {
    if (this.closed) throw new BagError('CLOSED', 'writer is closed', { file: this.path });
    const { control } = this.ring;
    let offset = 0;
    while (offset < bytes.length) {
      this.throwIfFailed();
      const free = this.capacity - ((this.head - Atomics.load(control, TAIL)) | 0);
      if (free === 0) {
        this.waitForTail((tail) => tail !== ((this.head - this.capacity) | 0));
        continue;
      }
      const at = this.pos % this.capacity;
      const length = Math.min(free, bytes.length - offset, this.capacity - at);
      this.ring.bytes.set(bytes.subarray(offset, offset + length), at);
      offset += length;
      this.pos += length;
      this.head = (this.head + length) | 0;
      Atomics.store(control, HEAD, this.head);
      this.signal();
    }
  }

  writev(chunks: readonly Uint8Array[]): void {
    for (const chunk of chunks) this.write(chunk);
  }

  writeAt(bytes: Uint8Array, position: number): void {
    if (position < 0 || position + bytes.length > this.pos) {
      throw new BagError('INTERNAL', 'writeAt outside the written bytes', { file: this.path, offset: position });
    }
    this.drain();
    let done = 0;
    try {
      while (done < bytes.length) done += writeSync(this.fd, bytes, done, bytes.length - done, position + done);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'write failed', { file: this.path, offset: position + done });
    }
  }

  /** Waits until the I/O thread has handed every byte to the OS. */
  flush(): void {
    this.drain();
  }

  sync(): void {
    this.drain();
    try {
      fsyncSync(this.fd);
    } catch (error) {
      throw BagError.wrap(error, 'IO_ERROR', 'fsync failed', { file: this.path });
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    const { control } = this.ring;
    let failure: unknown;
    try {
      this.drain();
    } catch (error) {
      failure = error;
    }
    // Stop the thread (it closes its descriptor) and wait for it, so nothing writes to the file after close.
    Atomics.compareExchange(control, STATE, RUNNING, STOPPING);
    this.signal();
    try {
      this.waitForEnd();
    } catch (error) {
      failure ??= error;
    }
    try {
      closeSync(this.fd);
    } catch (error) {
      failure ??= BagError.wrap(error, 'IO_ERROR', 'close failed', { file: this.path });
    }
    if (failure) throw failure;
  }

  /** Wakes the I/O thread to look at `HEAD` and `STATE` again. */
  private signal(): void {
    Atomics.add(this.ring.control, SIGNAL, 1);
    Atomics.notify(this.ring.control, SIGNAL);
  }

  private drain(): void {
    this.waitForTail((tail) => tail === this.head);
  }

  private throwIfFailed(): void {
    if (Atomics.load(this.ring.control, STATE) === FAILED) {
      throw new BagError('IO_ERROR', `write failed: ${ringError(this.ring)}`, { file: this.path });
    }
  }

  /** Blocks until `done(tail)` holds; throws when the I/O thread failed or never started. */
  private waitForTail(done: (tail: number) => boolean): void {
    const { control } = this.ring;
    for (let waited = 0; ; waited += WAIT_SLICE_MS) {
      const tail = Atomics.load(control, TAIL);
      if (done(tail)) return;
      this.throwIfFailed();
      this.throwIfNeverStarted(waited);
      Atomics.wait(control, TAIL, tail, WAIT_SLICE_MS);
    }
  }

  /** Blocks until the I/O thread has ended (it notifies `TAIL` on the way out). */
  private waitForEnd(): void {
    const { control } = this.ring;
    for (let waited = 0; ; waited += WAIT_SLICE_MS) {
      const state = Atomics.load(control, STATE);
      if (state === STOPPED || state === FAILED) return;
      this.throwIfNeverStarted(waited);
      Atomics.wait(control, TAIL, Atomics.load(control, TAIL), WAIT_SLICE_MS);
    }
  }

  private throwIfNeverStarted(waited: number): void {
    if (waited >= START_TIMEOUT_MS && Atomics.load(this.ring.control, READY) === 0) {
      throw new BagError('IO_ERROR', `the file I/O thread did not start within ${START_TIMEOUT_MS / 1000} s`, { file: this.path });
    }
  }
}
