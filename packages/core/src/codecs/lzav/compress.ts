import { BlockWriter } from './block-writer.js';
import { compressHi } from './compress-hi.js';
import { FORMAT_CURRENT, LITERALS_AT_END, MIN_OFFSET, MREF5_THRESHOLD, WINDOW, compressBound } from './format.js';
import { hashTable, hashWords, load32, matchLength, matchLengthBack, outputBuffer, viewOf } from './match.js';

/** The default compressor never grows its table past 1 MiB: bigger tables cost more to clear than they gain. */
const MAX_TABLE_BYTES = 1 << 20;

/**
 * Compresses `src` into a new array with `head` spare bytes before the LZAV stream and `tail` after it, so the
 * compression frame can be filled in without a second copy. `hi` selects lzav_compress_hi's algorithm; otherwise
 * mref 5 is used below 256 KiB and mref 6 above, like lzav_compress_default.
 */
export function compressWithRoom(src: Uint8Array, hi: boolean, head: number, tail: number): Uint8Array {
  if (src.length === 0) return new Uint8Array(head + tail);
  const mref = hi || src.length < MREF5_THRESHOLD ? 5 : 6;
  const out = outputBuffer(compressBound(src.length, mref));
  const length =
    src.length < 16 ? compressTiny(src, out, mref) : hi ? compressHi(src, out) : compressFast(src, out, mref);
  const result = new Uint8Array(head + length + tail);
  result.set(out.subarray(0, length), head);
  return result;
}

/** Inputs under 16 bytes are one literal block, zero-padded so the stream meets the 11-byte minimum. */
function compressTiny(src: Uint8Array, out: Uint8Array, mref: number): number {
  out[0] = (FORMAT_CURRENT << 4) | mref;
  out[1] = src.length;
  out.set(src, 2);
  const end = 2 + Math.max(src.length, LITERALS_AT_END);
  out.fill(0, 2 + src.length, end);
  return end;
}

/**
 * The default (fast) compressor: one (word, position) slot per hash bucket, greedy matching, and a running average
 * of match success (`avg`) that makes it skip ahead faster on data that does not compress.
 */
function compressFast(src: Uint8Array, out: Uint8Array, mref: 5 | 6): number {
  const srcLen = src.length;
  const view = viewOf(src);
  let tableBytes = 2048;
  while (tableBytes >>> 2 < srcLen && tableBytes < MAX_TABLE_BYTES) tableBytes *= 2;
  const mask = (tableBytes - 1) ^ 7;
  const table = hashTable(tableBytes >>> 2, load32(src, 1));
  const writer = new BlockWriter(out, mref, (FORMAT_CURRENT << 4) | mref);
  const end = srcLen - LITERALS_AT_END; // matches must stop here
  const hashEnd = end - 6; // keeps the 10-byte lookahead of hashing in bounds
  const wide = mref === 6;
  let anchor = 0; // first byte not yet emitted
  let ip = 2;
  let avg = 100 << 17; // success average scaled by 2^11; can exceed 2^31, hence no `>>` on it

  while (ip < hashEnd) {
    const w1 = load32(src, ip);
    const w2 = wide ? src[ip + 4] | (src[ip + 5] << 8) : src[ip + 4];
    const slot = hashWords(w1, w2, 12, mask) >>> 2;

    if (w1 === table[slot]) {
      const wpo = table[slot + 1];
      const ww2 = wide ? src[wpo + 4] | (src[wpo + 5] << 8) : src[wpo + 4];
      if (w2 === ww2) {
        const dist = ip - wpo;
        // Offsets below 8 would make the decoder's fixed-size copies overlap wrongly.
        if (dist < MIN_OFFSET) {
          ip++;
          continue;
        }
        // Keep the older position for short offsets so runs keep matching far back.
        table[slot + 1] = dist > 31 ? ip : wpo;
        let len = matchLength(src, view, ip, wpo, end - ip, mref);
        const ip0 = ip;
        let lits = ip - anchor;
        if (lits !== 0 && src[ip - 1] === src[wpo - 1]) {
          const back = matchLengthBack(src, ip, wpo, lits < wpo ? lits : wpo);
          lits -= back;
          len += back;
          ip -= back;
        }
        if (dist < (WINDOW << writer.carryShift) << (lits !== 0 ? 2 : 0)) {
          // Index two of the skipped positions so the next matches can be found.
          const w3 = load32(src, ip0 + 2);
          const s3 = hashWords(w3, wide ? src[ip0 + 6] | (src[ip0 + 7] << 8) : src[ip0 + 6], 12, mask) >>> 2;
          avg -= (avg / 1024) | 0;
          table[s3] = w3;
          table[s3 + 1] = ip0 + 2;
          const w4 = load32(src, ip0 + 4);
          const s4 = hashWords(w4, wide ? src[ip0 + 8] | (src[ip0 + 9] << 8) : src[ip0 + 8], 12, mask) >>> 2;
          table[s4] = w4;
          table[s4 + 1] = ip0 + 4;
          avg += len * 128;
          writer.block(src, anchor, lits, len, dist);
          ip += len;
          anchor = ip;
          continue;
        }
        ip = ip0 + 1;
        continue;
      }
    }

    table[slot] = w1;
    table[slot + 1] = ip;
    avg -= (avg / 2048) | 0;
    const at = ip;
    ip++;
    if (avg < 200 << 10 && at !== anchor) {
      ip += 1 + (at & 1) + (avg < 130 << 10 ? 1 : 0);
      if (avg < 100 << 10) ip += 100 - (avg >> 10);
    }
  }
  return writer.finish(src, anchor, srcLen - anchor);
}
