import { workerData } from 'node:worker_threads';
import { failThread, openThreadControl, READY, waitForWork } from './thread-control.js';

// A helper that fails at its first piece of work, as a compressor or writer thread whose work throws does
// (helper-thread.test.ts).
const t = openThreadControl((workerData as { control: SharedArrayBuffer }).control);
Atomics.store(t.control, READY, 1);
if (waitForWork(t, 0) !== undefined) failThread(t, 'disk on fire');
