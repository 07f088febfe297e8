import { TWO_32 } from './constants.js';

/**
 * Writes `base + rel` as a little-endian u64 at `at`, where `base` is given as 32-bit halves and `rel` is an integer
 * number with |rel| < 2^53: absolute ns times without a bigint per message.
 */
export function setTime(view: DataView, at: number, baseHi: number, baseLo: number, rel: number): void {
  const total = baseLo + rel;
  view.setUint32(at, total >>> 0, true);
  view.setUint32(at + 4, baseHi + Math.floor(total / TWO_32), true);
}
