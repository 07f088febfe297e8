/**
 * CRC-32 (IEEE 802.3, reflected, as MCAP uses), table-driven with slicing-by-8: eight bytes per step, which keeps
 * chunk CRCs (`enableChunkCrc`) cheap next to the write itself.
 */
const TABLES = buildTables();

function buildTables(): Uint32Array {
  const t = new Uint32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  for (let n = 0; n < 256; n++) {
    let c = t[n]!;
    for (let k = 1; k < 8; k++) {
      c = t[c & 0xff]! ^ (c >>> 8);
      t[k * 256 + n] = c >>> 0;
    }
  }
  return t;
}

export const CRC32_INIT = 0xffffffff;

/** Feeds bytes into a running CRC (start with `CRC32_INIT`, end with `crc32Final`). */
export function crc32Update(crc: number, bytes: Uint8Array): number {
  const t = TABLES;
  let c = crc >>> 0;
  let i = 0;
  const n = bytes.length;
  const end8 = n - (n & 7);
  for (; i < end8; i += 8) {
    const lo = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c =
      t[1792 + (lo & 0xff)]! ^
      t[1536 + ((lo >>> 8) & 0xff)]! ^
      t[1280 + ((lo >>> 16) & 0xff)]! ^
      t[1024 + (lo >>> 24)]! ^
      t[768 + bytes[i + 4]!]! ^
      t[512 + bytes[i + 5]!]! ^
      t[256 + bytes[i + 6]!]! ^
      t[bytes[i + 7]!]!;
  }
  for (; i < n; i++) c = t[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return c >>> 0;
}

export function crc32Final(crc: number): number {
  return (crc ^ 0xffffffff) >>> 0;
}

export function crc32(bytes: Uint8Array): number {
  return crc32Final(crc32Update(CRC32_INIT, bytes));
}
