import zstd from '@foxglove/wasm-zstd';
import { workerData } from 'node:worker_threads';
import {
  failThread,
  openThreadControl,
  READY,
  reportDone,
  STATE,
  STOPPED,
  TAIL,
  waitForWork,
} from '@vlink/bag-core/internal/thread-control';
import { zstdCompressInto } from './zstd-compress.js';
import { crc32Append } from '../mcap/crc32.js';
import {
  compressedCrcAt,
  crcsWantedAt,
  lengthAt,
  levelAt,
  recordsCrcAt,
  resultAt,
  SLOTS,
  type CompressorThreadData,
} from './threaded-compressor.js';

/**
 * The thread of a `ThreadedCompressor`: compresses each chunk the writer puts into a slot's input with zstd and
 * leaves the result in that slot's output, in order, until told to stop; asked for them, it leaves the CRC-32s of the
 * records and of the result beside it (the chunk CRC and the data-section CRC). It has its own instance of the
 * WebAssembly codec (used where the runtime has no zstd of its own, see zstd-compress.ts). Of core it imports the
 * thread control alone, not `/internal`: that would load most of core into the thread (hand-measured: a 9 ms import
 * instead of 33).
 */
const data = workerData as CompressorThreadData;
const t = openThreadControl(data.control);
const inputs = data.inputs.map((b) => new Uint8Array(b));
const outputs = data.outputs.map((b) => new Uint8Array(b));
let tail = 0;

try {
  await zstd.isLoaded;
  Atomics.store(t.control, READY, 1);
  while (waitForWork(t, tail) !== undefined) {
    const slot = tail & (SLOTS - 1);
    const records = inputs[slot]!.subarray(0, Atomics.load(t.extra, lengthAt(slot)));
    // A result that does not fit (−1) is no smaller than the input: the writer stores the chunk uncompressed then.
    const length = zstdCompressInto(records, Atomics.load(t.extra, levelAt(slot)), outputs[slot]!);
    if (Atomics.load(t.extra, crcsWantedAt(slot)) === 1) {
      // Here, not on the writer's thread: with 1 MiB frames that thread is the busier one (both compress chunks).
      Atomics.store(t.extra, recordsCrcAt(slot), crc32Append(0, records) | 0);
      if (length >= 0)
        Atomics.store(t.extra, compressedCrcAt(slot), crc32Append(0, outputs[slot]!.subarray(0, length)) | 0);
    }
    Atomics.store(t.extra, resultAt(slot), length);
    tail = (tail + 1) | 0;
    reportDone(t, tail);
  }
  Atomics.store(t.control, STATE, STOPPED);
} catch (error) {
  failThread(t, error instanceof Error ? error.message : String(error));
} finally {
  Atomics.notify(t.control, TAIL);
}
