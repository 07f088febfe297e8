import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import type { DropReason } from './writer-stats.js';

/**
 * What every push passes before the queue, in all three modes: the checks that need no queue (a url, a live
 * payload, an open writer) and the timestamps the writer fills in (format reference §2.9). Kept free of the writer's
 * state so the rules read in one place.
 */
export interface Refusal {
  reason: DropReason;
  error: BagError;
}

/** Why `frame` cannot be queued at all, or undefined when it can. `closed`: the writer quit or closed. */
export function refusalOf(frame: Frame, file: string, closed: boolean): Refusal | undefined {
  if (closed) return { reason: 'closed', error: new BagError('CLOSED', 'writer is closed', { file }) };
  if (!frame || typeof frame.url !== 'string' || frame.url.length === 0)
    return { reason: 'emptyUrl', error: new BagError('INVALID_ARGUMENT', 'frame url must not be empty') };
  if (
    !(frame.data instanceof Uint8Array) ||
    (frame.data.byteLength === 0 && (frame.data.buffer as { detached?: boolean }).detached)
  ) {
    // A detached buffer (given away earlier with `transferPayloads`) would otherwise pass as an empty payload.
    return {
      reason: 'emptyUrl',
      error: new BagError('INVALID_ARGUMENT', 'frame data must be a Uint8Array (not detached)', { url: frame.url }),
    };
  }
  return undefined;
}

/**
 * The frame with its times resolved: a negative or non-finite `timestamp` takes the clock's `nowUs()`, times are floored to whole
 * µs. The frame itself when nothing changes (the common case allocates nothing).
 */
export function withResolvedTimes(frame: Frame, clock: { nowUs(): number }): Frame {
  const timestamp =
    frame.timestamp < 0 || !Number.isFinite(frame.timestamp) ? clock.nowUs() : Math.floor(frame.timestamp);
  // A publish time is floored like the log time; anything but a finite number means "none" (= the log time).
  const p = frame.publishTime;
  const publishTime = p === undefined || !Number.isFinite(p) ? undefined : Math.floor(p);
  if (timestamp === frame.timestamp && publishTime === p) return frame;
  const out = { ...frame, timestamp };
  if (publishTime === undefined) delete out.publishTime;
  else out.publishTime = publishTime;
  return out;
}
