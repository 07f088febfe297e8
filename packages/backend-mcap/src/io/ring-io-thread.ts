import { closeSync, openSync, writeSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { failRing, HEAD, openByteRing, READY, RUNNING, SIGNAL, STATE, STOPPED, TAIL, type RingThreadData } from './byte-ring.js';

/**
 * The I/O thread of a `RingWritable`: appends whatever the writer puts into the ring to the file, in order, until
 * told to stop. Started with `node:worker_threads` (Node, Bun and Deno all have it); it opens the file itself because
 * Deno's descriptors are per isolate. It only ever blocks in `Atomics.wait` and in `write`.
 */
const data = workerData as RingThreadData;
const ring = openByteRing(data.control, data.bytes);
const { control, bytes } = ring;
const capacity = bytes.length;
let fd = -1;
let tail = 0;
let written = 0;

try {
  fd = openSync(data.path, 'r+');
  Atomics.store(control, READY, 1);
  for (;;) {
    // Read before HEAD and STATE: whatever the writer changes after this line also changes SIGNAL, so the wait below
    // returns at once instead of missing it.
    const signal = Atomics.load(control, SIGNAL);
    const head = Atomics.load(control, HEAD);
    if (head === tail) {
      if (Atomics.load(control, STATE) !== RUNNING) break;
      Atomics.wait(control, SIGNAL, signal);
      continue;
    }
    const at = written % capacity;
    const length = Math.min((head - tail) | 0, capacity - at);
    let done = 0;
    while (done < length) done += writeSync(fd, bytes, at + done, length - done, written + done);
    written += length;
    tail = (tail + length) | 0;
    Atomics.store(control, TAIL, tail);
    Atomics.notify(control, TAIL);
  }
  closeSync(fd);
  fd = -1;
  Atomics.store(control, STATE, STOPPED);
} catch (error) {
  failRing(ring, error instanceof Error ? error.message : String(error));
  try {
    if (fd >= 0) closeSync(fd);
  } catch {
    // The write error is the one worth reporting.
  }
} finally {
  Atomics.notify(control, TAIL);
}
