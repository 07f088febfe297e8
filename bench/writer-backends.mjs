// A backend for bench/writer.bench.mjs. It says `workerModule: import.meta.url`, which is all a backend needs to be
// written from a worker: the worker imports this module and picks the backend by name.
import { closeSync, openSync, writeSync } from 'node:fs';

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * `.slowraw`: appends `[u32 length][payload]` records to a file, at most VLINK_BENCH_DISK_MBPS MB/s (default 50):
 * a disk slower than the producer. The limit is enforced by sleeping the writing thread, like a blocking write.
 */
export const slowRawBackend = {
  name: 'slowraw',
  extensions: ['.slowraw'],
  workerModule: import.meta.url,
  async createWriter(path) {
    const mbps = Number(globalThis.process?.env?.VLINK_BENCH_DISK_MBPS ?? 50);
    const fd = openSync(path, 'w');
    const header = new Uint8Array(4);
    const view = new DataView(header.buffer);
    let debt = 0;
    const started = performance.now();
    let bytes = 0;
    return {
      write(frame) {
        view.setUint32(0, frame.data.byteLength, true);
        writeSync(fd, header);
        if (frame.data.byteLength > 0) writeSync(fd, frame.data);
        bytes += frame.data.byteLength + 4;
        // Sleep until the file has taken no more than mbps since the start.
        debt = bytes / (mbps * 1000) - (performance.now() - started);
        if (debt > 1) Atomics.wait(sleeper, 0, 0, debt);
      },
      writeSchema() {},
      setUrlLoss() {},
      commit() {},
      tick() {},
      currentFile: () => path,
      close() {
        closeSync(fd);
      },
    };
  },
  async openReader() {
    throw new Error('slowraw is write-only');
  },
};
