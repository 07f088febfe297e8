import { workerData } from 'node:worker_threads';
import { openThreadControl, READY, reportDone, STATE, STOPPED, waitForWork } from './thread-control.js';

// A helper that takes `startMs` to get ready, as a compressor thread started by a worker on Deno does (about 0.6 s),
// then does each piece of work handed to it (helper-thread.test.ts).
const data = workerData as { control: SharedArrayBuffer; startMs: number };
const t = openThreadControl(data.control);
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, data.startMs);
Atomics.store(t.control, READY, 1);
let tail = 0;
while (waitForWork(t, tail) !== undefined) reportDone(t, (tail = (tail + 1) | 0));
Atomics.store(t.control, STATE, STOPPED);
Atomics.notify(t.control, 1);
