/**
 * The start the segments are rebased on (`rebaseOnFirstSegment`): the first segment's, as VLink takes it, unless the
 * first segment knows none (a segment whose header was cut off, with no message to start at, reads as starting at 0:
 * found by fuzzing, every later frame then got its absolute time), or the first segment is damaged (`sound` false: read
 * with `tryToFix`, not complete) and disagrees with the manifest (every segment has the manifest's start, so one of
 * the two is wrong, and the damaged one is the likelier: found by fuzzing, a garbled digit of its header moved every
 * frame of the recording), where the manifest's is used.
 */
export function recordingStart(firstSegment: number | undefined, manifestStart: number, sound = true): number {
  if (firstSegment === undefined || firstSegment <= 0) return manifestStart;
  return !sound && manifestStart > 0 ? manifestStart : firstSegment;
}
