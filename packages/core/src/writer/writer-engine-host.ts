import type { BagError } from '../errors.js';
import type { EngineHost } from './engine.js';
import type { RecordingOutput } from './recording-output.js';
import type { SplitNotifications } from './split-notifications.js';
import type { WriteWaiters } from './write-waiters.js';
import type { WriterAccounting } from './writer-accounting.js';

/** The parts of a `BagWriter` that the engines' reports reach, and the writer's own state changes. */
export interface HostedWriter {
  accounting: WriterAccounting;
  waiters: WriteWaiters;
  splits: SplitNotifications;
  output: RecordingOutput;
  report(error: BagError): void;
  /** Frames left the queue: waiting writes may go on. */
  room(): void;
  /** A storage error: frames after it are refused. */
  markFailed(): void;
  /** The file is closed (or the engine gone): `waitForQuit()` resolves. */
  markFinished(): void;
}

/**
 * The engines' view of a writer (see `EngineHost`): every report fans out to the part that owns it, so the counters,
 * callbacks and waiting writes live on the producer's thread whichever thread writes.
 */
export function engineHostFor(w: HostedWriter): EngineHost {
  const { accounting, waiters, splits, output } = w;
  /** The segment being written, as the last split notice named it (the first notice names the first segment). */
  let openSegment: string | undefined;
  return {
    written: accounting.written,
    committed: () => void accounting.commits++,
    dropped: (reason, error, report, count = 1, url, storageSide = false) => {
      accounting.settleDropped(count);
      accounting.drop(reason, url ?? error.url ?? '', count, error, storageSide);
      if (report) w.report(error);
    },
    counters: () => accounting.counters.table(),
    producerCounters: () => accounting.producerCounters.table(),
    room: () => w.room(),
    failed: (error) => {
      w.markFailed();
      accounting.lastError = error;
      w.report(error);
      // Nothing will make room any more: waiting writes fail with the reason, `ready()` waiters go on.
      waiters.failAll(error);
    },
    warn: (error) => w.report(error),
    split: (index, file, before) => {
      // After a split `file` is the segment just opened, so the one it closed is the previous one: that one a url's
      // staging uploads at once (never a newer file of the folder, which the worker may be writing already).
      if (!before) {
        if (openSegment !== undefined) output.segmentClosed(openSegment);
        openSegment = file;
      }
      splits.notify(index, file, before);
    },
    finished: () => w.markFinished(),
  };
}
