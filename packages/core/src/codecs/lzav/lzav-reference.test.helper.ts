/**
 * A second LZAV format-3 decoder for the tests, written from the format description (lzav.h 5.x,
 * `lzav_decompress_3`) for clarity, not speed: one byte at a time, every rule an explicit check. Tests compare the
 * real decoder's output with this one byte for byte, so a decoder that accepts what it should refuse, or writes the
 * wrong bytes, fails even where the output length comes out right. Returns undefined where the stream is invalid.
 */
export function referenceDecodeV3(src: Uint8Array, dstLen: number): Uint8Array | undefined {
  if (src.length < 11 || src[0] >>> 4 !== 3 || dstLen <= 0) return undefined;
  const mref = src[0] & 15;
  if (mref < 1 || mref > 6) return undefined;
  const out = new Uint8Array(dstLen);
  let n = 0; // bytes decoded so far
  const lastHeader = src.length - 9; // a block header must start before the last 9 input bytes
  let ip = 1;
  let carry = 0; // low offset bits carried by the previous block for the next reference
  let carryBits = 0;

  /** A block length: the header's low nibble, or 16 + a base-128 number of up to 5 bytes when the nibble is 0. */
  const length = (nibble: number): number => {
    if (nibble !== 0) return nibble;
    let value = 0;
    for (let n = 0, scale = 1; n < 5; n++, scale *= 128) {
      const b = src[ip++];
      value += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) break;
    }
    return value + 16;
  };

  while (ip < lastHeader) {
    let header = src[ip++];
    if ((header & 0x30) === 0) {
      // Literal block: its top 2 bits are carry bits for the next reference.
      carry |= (header >>> 6) << carryBits;
      carryBits += 2;
      const count = length(header & 15);
      if (n + count > dstLen || ip + count > src.length) return undefined;
      for (let i = 0; i < count; i++) out[n++] = src[ip++];
      if (ip >= lastHeader) break; // the closing literal block: the rest is padding
      header = src[ip++]; // a reference always follows a literal block
    }
    const offsetBytes = (header >>> 4) & 3;
    let offset = header >>> 6;
    let nextCarry = 0;
    let nextCarryBits = 0;
    if (offsetBytes >= 1) offset |= src[ip] << 2;
    if (offsetBytes === 2) {
      offset |= (src[ip + 1] & 0x1f) << 10;
      nextCarry = src[ip + 1] >>> 5;
      nextCarryBits = 3;
    }
    if (offsetBytes === 3) {
      offset |= (src[ip + 1] << 10) | ((src[ip + 2] & 7) << 18);
      nextCarry = src[ip + 2] >>> 3;
      nextCarryBits = 5;
    }
    ip += offsetBytes;
    const distance = offset * 2 ** carryBits + carry;
    carry = nextCarry;
    carryBits = nextCarryBits;
    const count = length(header & 15) + mref - 1;
    // The reference must lie in what was already decoded, at least 8 bytes back, and end 8 bytes before the end.
    if (distance < 8 || distance > n) return undefined;
    if (n + count > dstLen - 8) return undefined;
    const from = n - distance;
    for (let i = 0; i < count; i++) out[n++] = out[from + i];
  }
  return n === dstLen ? out : undefined;
}
