import { BlockWriter } from './block-writer.js';
import { FORMAT_CURRENT, LITERALS_AT_END, MIN_OFFSET, OFFSET_1BYTE_MAX, OFFSET_2BYTE_MAX, WINDOW } from './format.js';
import { hashTable, hashWords, load32, matchLength, matchLengthBack, viewOf } from './match.js';

const MREF = 5;
/** 8 (word, position) pairs per bucket: 16 ints, 64 bytes; a bucket index is `slot >>> 4`. */
const BUCKET_INTS = 16;
const MAX_TABLE_BYTES = 1 << 23;

/**
 * The high-ratio compressor (lzav_compress_hi): 8 candidates per bucket, longest match wins, and a one-match
 * lookahead: a found match is held back until the match at the next position is known, and whichever encodes
 * more bytes per estimated output byte is emitted.
 */
export function compressHi(src: Uint8Array, out: Uint8Array): number {
  const srcLen = src.length;
  const view = viewOf(src);
  let tableBytes = 8192;
  while (tableBytes !== MAX_TABLE_BYTES && tableBytes >>> 2 < srcLen) tableBytes *= 2;
  const mask = (tableBytes - 1) ^ (BUCKET_INTS * 4 - 1);
  const table = hashTable(tableBytes >>> 2, load32(src, 1));
  const heads = bucketHeads(tableBytes >>> 6);
  const writer = new BlockWriter(out, MREF, (FORMAT_CURRENT << 4) | MREF);
  const end = srcLen - LITERALS_AT_END;
  const hashEnd = end - 6;
  let anchor = 0;
  let ip = 2;
  // The held-back match: its length (0 = none), offset and start.
  let prevLen = 0;
  let prevDist = 0;
  let prevAt = 0;

  while (ip < hashEnd) {
    const w1 = load32(src, ip);
    const slot = hashWords(w1, src[ip + 4], 8, mask) >>> 2;
    const ipo = ip;
    const maxLen = end - ip;
    let len = 1;
    let dist = MIN_OFFSET;
    const newest = heads[slot >>> 4];
    // A fresh bucket holds 8 copies of one candidate; measuring it again cannot beat the first (ties keep the
    // first), so repeated positions are skipped. Long runs would otherwise cost 8 full-length comparisons.
    let seen = -1;
    for (let j = 0; j < 8; j++) {
      const k = ((newest + j) & 7) << 1;
      if (table[slot + k] === w1 && table[slot + k + 1] !== seen) {
        const wp = table[slot + k + 1];
        seen = wp;
        // Only a candidate that also matches at offset `len` can be longer than the best so far.
        if (src[ip + len] !== src[wp + len] || len >= maxLen) continue;
        const ml = matchLength(src, view, ip, wp, maxLen, 4);
        if (ml > len) {
          dist = ip - wp;
          len = ml;
        }
      }
    }
    // `dist === len` is a run replicating itself; indexing it would only crowd out useful candidates.
    if (dist !== len && dist >= MIN_OFFSET) insert(table, heads, slot, w1, ipo);
    // Far offsets cost more bytes, so they must buy a longer match.
    if (len < MREF + (dist > 1 << 18 ? 1 : 0) + (dist > 1 << 22 ? 1 : 0) || dist < MIN_OFFSET) {
      ip++;
      continue;
    }

    const next = ip + 1;
    let lits = ip - anchor;
    const wp = ip - dist;
    if (lits !== 0 && src[ip - 1] === src[wp - 1]) {
      const back = matchLengthBack(src, ip, wp, wp > lits ? lits : wp);
      lits -= back;
      len += back;
      ip -= back;
    }
    if (dist >= (WINDOW << writer.carryShift) << (lits !== 0 ? 2 : 0)) {
      ip = next;
      if (dist === len) insert(table, heads, slot, w1, ipo);
      continue;
    }
    if (prevLen === 0) {
      prevLen = len;
      prevDist = dist;
      prevAt = ip;
      ip = next;
      continue;
    }

    const cost = blockCost(lits, dist, writer.carryShift);
    const prevCost = blockCost(prevAt - anchor, prevDist, writer.carryShift);
    if (prevLen * cost > len * prevCost) {
      // The held-back match is denser: emit it, then reconsider the current one if it still lies ahead.
      writer.block(src, anchor, prevAt - anchor, prevLen, prevDist);
      anchor = prevAt + prevLen;
      if (anchor > ip || dist >= (WINDOW << writer.carryShift) << (ip !== anchor ? 2 : 0)) {
        prevLen = 0;
        ip = anchor > next ? anchor : next;
        continue;
      }
      prevLen = len;
      prevDist = dist;
      prevAt = ip;
      ip = next;
      continue;
    }

    // The current match wins; the held-back one is dropped (its bytes become literals).
    const w3 = load32(src, ip + 2);
    insert(table, heads, hashWords(w3, src[ip + 6], 8, mask) >>> 2, w3, ip + 2);
    const w4 = load32(src, ip + 4);
    insert(table, heads, hashWords(w4, src[ip + 8], 8, mask) >>> 2, w4, ip + 4);
    const litFrom = anchor;
    ip += len;
    prevLen = 0;
    anchor = ip;
    writer.block(src, litFrom, lits, len, dist);
  }

  if (prevLen !== 0) {
    writer.block(src, anchor, prevAt - anchor, prevLen, prevDist);
    anchor = prevAt + prevLen;
  }
  return writer.finish(src, anchor, srcLen - anchor);
}

/**
 * Pushes a candidate to the front of its bucket, dropping the oldest. Buckets are rings scanned newest first from
 * `heads[bucket]`: the same candidate order as lzav.h's shift-down insert, for 3 writes instead of 16 moves.
 */
function insert(table: Int32Array, heads: Uint8Array, slot: number, word: number, pos: number): void {
  const bucket = slot >>> 4;
  const newest = (heads[bucket] - 1) & 7;
  heads[bucket] = newest;
  table[slot + (newest << 1)] = word;
  table[slot + (newest << 1) + 1] = pos;
}

let scratchHeads = new Uint8Array(0);

/**
 * Ring positions per bucket. They need no reset between calls: a fresh table holds 8 identical tuples per bucket,
 * so any starting position gives the same scan results.
 */
function bucketHeads(buckets: number): Uint8Array {
  if (scratchHeads.length < buckets) scratchHeads = new Uint8Array(buckets);
  return scratchHeads;
}

/** Estimated encoded size of a block with `lits` literals and offset `dist` (lzav_est_blksize). */
function blockCost(lits: number, dist: number, carryShift: number): number {
  const hasLits = lits !== 0 ? 1 : 0;
  const d = (dist >>> carryShift) >>> (hasLits << 1);
  return lits + hasLits + (lits > 15 ? 1 : 0) + 2 + (d > OFFSET_1BYTE_MAX ? 1 : 0) + (d > OFFSET_2BYTE_MAX ? 1 : 0);
}
