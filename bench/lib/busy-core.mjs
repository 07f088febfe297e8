// A thread that keeps another core busy while a benchmark runs, to show how much a second busy core slows the
// measured thread on this machine (bench/integrity.bench.mjs: syncMode beside a busy core). Two kinds of load:
//   alu     a register-only loop: takes a core's time and nothing else;
//   memory  a write+read pass over 64 MiB at cache-line stride: also takes the shared caches and memory bandwidth,
//           as a writer worker copying batches and chunks does.
// Runs in node:worker_threads (Node, Bun and Deno have it). The control word is shared: 0 idle (the thread sleeps in
// Atomics.wait), 1 busy, 2 exit.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

const IDLE = 0;
const BUSY = 1;
const EXIT = 2;

if (!isMainThread && workerData?.busyCore) {
  const control = new Int32Array(workerData.control);
  const memory = workerData.kind === 'memory' ? new Uint8Array(64 * 1024 * 1024) : undefined;
  let sink = 0;
  parentPort.postMessage('ready');
  for (;;) {
    Atomics.wait(control, 0, IDLE);
    const state = Atomics.load(control, 0);
    if (state === EXIT) break;
    while (Atomics.load(control, 0) === BUSY) {
      if (memory) {
        for (let i = 0; i < memory.length; i += 64) {
          sink = (sink + memory[i]) | 0;
          memory[i] = sink;
        }
      } else {
        for (let i = 0; i < 1_000_000; i++) sink = (sink * 31 + i) | 0;
      }
    }
  }
  // The sum goes out so that no compiler can drop the loops that make it.
  parentPort.postMessage(sink);
}

/** Starts a busy-core thread of `kind` ('alu' | 'memory'), idle until `during()` runs something beside it. */
export async function startBusyCore(kind) {
  const control = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { busyCore: true, kind, control: control.buffer },
  });
  await new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const set = (state) => {
    Atomics.store(control, 0, state);
    Atomics.notify(control, 0);
  };
  return {
    /** Runs `fn` while the thread is busy; the thread goes idle again when `fn` settles. */
    async during(fn) {
      set(BUSY);
      // Let it get going before the measured work starts.
      await new Promise((resolve) => setTimeout(resolve, 20));
      try {
        return await fn();
      } finally {
        set(IDLE);
      }
    },
    async stop() {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      set(EXIT);
      await exited;
    },
  };
}
