// The benchmarks' synthetic payload.

/**
 * `size` bytes, half pattern and half xorshift noise in 32-byte runs: zstd shrinks it to roughly 55 % and LZAV to
 * roughly 60 %, like real sensor payloads, and it is never constant. The same `seed` gives the same bytes.
 */
export function payload(size, seed) {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = (i >> 5) & 1 ? x & 0xff : i & 0x3f;
  }
  return out;
}
