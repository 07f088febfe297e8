/**
 * What the zstd frames of a chunk say about their decompressed size, read from the frame headers alone (RFC 8878
 * §3.1.1) without decompressing: the sum of every frame's Frame_Content_Size, `unknown` when a frame leaves it out,
 * or `invalid` when the bytes are not a sequence of zstd frames. Lets the chunk loader refuse a chunk whose claimed
 * size is a lie before the codec allocates that many bytes (the WebAssembly heap never shrinks again).
 */
export function zstdContentSize(data: Uint8Array): number | 'unknown' | 'invalid' {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const n = data.length;
  let total = 0;
  let known = true;
  let p = 0;
  while (p < n) {
    if (n - p < 4) return 'invalid';
    const magic = view.getUint32(p, true);
    if ((magic & 0xfffffff0) === 0x184d2a50) {
      // Skippable frame: magic, u32 size, that many bytes.
      if (n - p < 8) return 'invalid';
      const size = view.getUint32(p + 4, true);
      if (size > n - p - 8) return 'invalid';
      p += 8 + size;
      continue;
    }
    if (magic !== 0xfd2fb528) return 'invalid';
    p += 4;
    if (p >= n) return 'invalid';
    const descriptor = data[p++]!;
    const fcsFlag = descriptor >> 6;
    const singleSegment = (descriptor & 0x20) !== 0;
    if ((descriptor & 0x08) !== 0) return 'invalid'; // reserved bit
    const checksum = (descriptor & 0x04) !== 0;
    const dictBytes = [0, 1, 2, 4][descriptor & 3]!;
    const fcsBytes = fcsFlag === 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]!;
    const headerRest = (singleSegment ? 0 : 1) + dictBytes + fcsBytes;
    if (n - p < headerRest) return 'invalid';
    p += (singleSegment ? 0 : 1) + dictBytes;
    if (fcsBytes === 0) known = false;
    else if (fcsBytes === 1) total += data[p]!;
    else if (fcsBytes === 2) total += view.getUint16(p, true) + 256;
    else if (fcsBytes === 4) total += view.getUint32(p, true);
    else {
      const hi = view.getUint32(p + 4, true);
      if (hi > 0x1fffff) return 'invalid';
      total += hi * 4294967296 + view.getUint32(p, true);
    }
    p += fcsBytes;
    // Blocks: a 3-byte header each (last flag, type, size); RLE blocks store one byte.
    for (;;) {
      if (n - p < 3) return 'invalid';
      const header = data[p]! | (data[p + 1]! << 8) | (data[p + 2]! << 16);
      p += 3;
      const type = (header >> 1) & 3;
      if (type === 3) return 'invalid';
      const stored = type === 1 ? 1 : header >>> 3;
      if (stored > n - p) return 'invalid';
      p += stored;
      if (header & 1) break;
    }
    if (checksum) {
      if (n - p < 4) return 'invalid';
      p += 4;
    }
  }
  return known ? total : 'unknown';
}
