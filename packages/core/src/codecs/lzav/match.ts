/**
 * Helpers shared by both compressors: 32-bit loads, the LZAV hash, match length counting and a reusable hash table.
 * They must reproduce the C reference bit for bit (same hash, same tie-breaking), because that is what makes our
 * output byte-identical to lzav.h and keeps its compression ratio.
 */

/** Little-endian 32-bit load as a signed int, the same bits the C code compares as `uint32_t`. */
export function load32(src: Uint8Array, i: number): number {
  return src[i] | (src[i + 1] << 8) | (src[i + 2] << 16) | (src[i + 3] << 24);
}

/** lzav's multiplicative hash of two input words; returns a byte offset into the table (`mask` keeps alignment). */
export function hashWords(w1: number, w2: number, shift: number, mask: number): number {
  return (Math.imul(0x85a308d3 ^ w2, 0x243f6a88 ^ w1) >>> shift) & mask;
}

/**
 * Length of the common run of `src[a..]` and `src[b..]`, known to be at least `from`, capped at `max`. `view` is a
 * DataView over `src`: comparing 4 bytes per step through it is ~2.5x faster than bytewise on long runs.
 */
export function matchLength(src: Uint8Array, view: DataView, a: number, b: number, max: number, from: number): number {
  let n = from;
  while (n + 4 <= max && view.getInt32(a + n) === view.getInt32(b + n)) n += 4;
  while (n < max && src[a + n] === src[b + n]) n++;
  return n < max ? n : max;
}

/** A DataView over exactly the bytes of `src` (which may be a view into a larger buffer). */
export function viewOf(src: Uint8Array): DataView {
  return new DataView(src.buffer, src.byteOffset, src.byteLength);
}

/** How many bytes before `a` and `b` also match (at least 1: the caller checked the first), capped at `max`. */
export function matchLengthBack(src: Uint8Array, a: number, b: number, max: number): number {
  let n = 1;
  while (n < max && src[a - n - 1] === src[b - n - 1]) n++;
  return n;
}

let scratchTable = new Int32Array(0);
/** Tables up to 4 MiB are kept between calls (VLink keeps a 1 MiB one per thread); bigger ones are one-off. */
const KEEP_TABLE_INTS = 1 << 20;

/**
 * Returns a hash table of at least `ints` entries, every (word, position) pair set to (`word`, 1). Position 1 is a
 * valid but useless candidate, so lookups need no "empty slot" check. Initialisation doubles with copyWithin (memcpy
 * speed) instead of looping.
 */
export function hashTable(ints: number, word: number): Int32Array {
  let table = scratchTable;
  if (table.length < ints) {
    table = new Int32Array(ints);
    if (ints <= KEEP_TABLE_INTS) scratchTable = table;
  }
  table[0] = word;
  table[1] = 1;
  for (let filled = 2; filled < ints; filled *= 2) {
    table.copyWithin(filled, 0, Math.min(filled, ints - filled));
  }
  return table;
}

let scratchOut = new Uint8Array(0);
const KEEP_OUT_BYTES = 4 << 20;

/** A reusable output buffer of at least `bytes` bytes; callers copy their result out of it. */
export function outputBuffer(bytes: number): Uint8Array {
  if (scratchOut.length >= bytes) return scratchOut;
  const buffer = new Uint8Array(bytes);
  if (bytes <= KEEP_OUT_BYTES) scratchOut = buffer;
  return buffer;
}
