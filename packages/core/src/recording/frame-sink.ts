import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';

/**
 * Where the recording helpers (`SnapshotSampler`, `ActionRecorder`) put what they record: a `BagWriter` fits. Kept
 * to the three calls they need so a test, a trigger recorder or a relay can stand in for a writer.
 */
export interface FrameSink {
  /** Queues a frame; the timestamp used, or −1 when it was refused (the sink counts why). */
  push(frame: Frame): number;
  /** Counts `n` occurrences of `cause` on `url` in the recording's counters by cause (format reference §2.13). */
  count(url: string, cause: string, n?: number): void;
}

/**
 * A clock on the recording's time base: µs since recording start, the base of `Frame.timestamp` and
 * `Frame.publishTime`. The helpers read it for every time they stamp, so a test injects a fake one and stays exact;
 * a live recorder passes the writer's (`() => writer.nowUs()`).
 */
export type RecordingClock = () => number;

/** The clock value as a recording time: an integer µs, refusing what is not a finite number. */
export function readClock(clock: RecordingClock, what: string): number {
  const value = clock();
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new BagError('INVALID_ARGUMENT', `${what}: the clock returned ${String(value)}, not a finite number of µs`);
  return Math.floor(value);
}
