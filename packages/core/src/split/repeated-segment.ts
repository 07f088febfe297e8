import type { BackendReader } from '../backend/backend.js';
import type { Info } from '../model/info.js';
import type { OpenedSegment } from './split-segments.js';

/**
 * Whether a segment (its info `a`) repeats another (`b`): a copy of one segment file put in another's place reads as
 * that segment, its frames a second time (found by hand: `.vcapx` and `.vdbx`, 1,000 frames read of which 312 twice,
 * and `fix` kept them all and said nothing was lost). The segments of one recording never hold the same frames, so
 * one with frames whose start, first frame, duration and count are another's is that one.
 */
export function repeatsSegment(a: Info, b: Info): boolean {
  return (
    a.messageCount > 0 &&
    b.messageCount === a.messageCount &&
    b.startTimestamp === a.startTimestamp &&
    b.blankDuration === a.blankDuration &&
    b.totalDuration === a.totalDuration
  );
}

/** The earlier segment that `reader`'s repeats (with `tryToFix`, which does not hold segments against the manifest). */
export function repeatedSegment(opened: readonly OpenedSegment[], reader: BackendReader): string | undefined {
  const info = reader.info();
  return opened.find((other) => repeatsSegment(info, other.reader.info()))?.name;
}
