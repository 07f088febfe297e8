/**
 * The start the segments are rebased on (`rebaseOnFirstSegment`): the first segment's, as VLink takes it, unless the
 * first segment knows none (a segment whose header was cut off, with no message to start at, reads as starting at 0:
 * found by fuzzing, every later frame then got its absolute time), where the manifest's is used.
 */
export function recordingStart(firstSegment: number | undefined, manifestStart: number): number {
  return firstSegment === undefined || firstSegment <= 0 ? manifestStart : firstSegment;
}
