/**
 * Copy primitives for the decoders. Short copies are plain loops (a typed-array method call costs more than a few
 * byte moves); long ones use `set`/`copyWithin`, which run at memcpy speed.
 */

const SHORT_COPY = 32;

/** Copies `len` literal bytes from `src[from..]` to `out[op..]`; the caller has checked both ranges. */
export function copyLiterals(out: Uint8Array, op: number, src: Uint8Array, from: number, len: number): void {
  if (len < SHORT_COPY) {
    for (let i = 0; i < len; i++) out[op + i] = src[from + i];
  } else {
    out.set(src.subarray(from, from + len), op);
  }
}

/**
 * LZ77 back-reference: `len` bytes from `dist` bytes back. When `dist < len` the source overlaps the bytes being
 * written and the result repeats with period `dist`, which a forward byte loop produces naturally. For long
 * overlapping copies we instead grow the copied region geometrically (d, 2d, 4d, ...), each step a non-overlapping
 * copyWithin, so a 1 MiB run of zeros costs ~17 memcpy calls instead of a million iterations.
 */
export function copyMatch(out: Uint8Array, op: number, dist: number, len: number): void {
  const from = op - dist;
  if (len < SHORT_COPY) {
    for (let i = 0; i < len; i++) out[op + i] = out[from + i];
  } else if (dist >= len) {
    out.copyWithin(op, from, from + len);
  } else {
    let done = 0;
    while (done < len) {
      const step = Math.min(done + dist, len - done);
      out.copyWithin(op + done, from, from + step);
      done += step;
    }
  }
}
