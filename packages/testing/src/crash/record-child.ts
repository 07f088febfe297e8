/**
 * The process the kill -9 tests kill: records `crashFrame(0), crashFrame(1), …` at full speed into the bag given on
 * the command line until it is killed, and reports progress on stdout, one line at a time:
 *
 * - `ready`            the writer is open;
 * - `W <seq>`          frames 0..seq have been handed to the backend writer (`stats().writtenFrames`);
 * - `C <seq>`          frames 0..seq are committed (a `pushDurable` of frame seq resolved);
 * - `S <index>`        a split recording closed a segment (it is listed in the manifest from now on).
 *
 * Usage: record-child <path> <sync|worker> <cacheSize> <durableEvery (0 = never)> [splitBySize] [none|zstd]
 */
import { BagWriter } from '@vlink/bag';
import { crashFrame } from './payload.js';

const [path, mode = 'sync', cacheArg = '262144', everyArg = '64', splitArg = '524288', compressArg = 'none'] =
  process.argv.slice(2);
if (!path) {
  process.stderr.write(
    'usage: record-child <path> <sync|worker> <cacheSize> <durableEvery> [splitBySize] [none|zstd]\n',
  );
  process.exit(2);
}
const durableEvery = Number(everyArg);
const worker = mode === 'worker';
const writer = await BagWriter.create(path, {
  syncMode: !worker,
  ...(worker ? { worker: true } : {}),
  cacheSize: Number(cacheArg),
  splitBySize: Number(splitArg),
  compress: compressArg === 'zstd' ? 'zstd' : 'none',
  startTimestamp: 1_700_000_000_000,
});
const out = (line: string) => process.stdout.write(`${line}\n`);
writer.registerErrorCallback((error) => process.stderr.write(`writer error: ${error.code} ${error.message}\n`));
writer.registerSplitCallback((index) => out(`S ${index}`));
out('ready');

let committed = -1;
let reported = -1;
const report = () => {
  const written = writer.stats().writtenFrames - 1;
  if (written !== reported) out(`W ${(reported = written)}`);
};

for (let seq = 0; ; seq++) {
  const frame = crashFrame(seq);
  if (durableEvery > 0 && (seq + 1) % durableEvery === 0) {
    const durable = writer.pushDurable(frame).then(
      () => {
        if (seq > committed) out(`C ${(committed = seq)}`);
      },
      (error: unknown) => {
        process.stderr.write(`durable push ${seq} failed: ${String(error)}\n`);
        process.exit(3);
      },
    );
    if (!worker) await durable;
  } else {
    // Worker mode refuses frames when its queue is full: wait for it to drain, then push the same frame again, so
    // what reaches the file stays the sequence 0, 1, 2, …
    while (writer.push(frame) < 0) {
      if (writer.fail()) throw writer.stats().lastError;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  if ((seq & 127) === 127) {
    report();
    // Let worker acks and durable results in (the sync mode needs no turn of the event loop to make progress), and
    // keep the queue well below its limit so a durable push is never refused.
    if (worker) {
      await new Promise((resolve) => setImmediate(resolve));
      while (writer.stats().queuedFrames > 8192) await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
}
