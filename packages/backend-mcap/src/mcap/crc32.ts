import * as zlib from 'node:zlib';

/**
 * CRC-32 (IEEE 802.3, reflected, as MCAP uses) in its final form: `crc32(bytes)` is the checksum, and
 * `crc32Append(crc32(a), b) === crc32(a ++ b)`. The runtime's native implementation is used when there is one —
 * `Bun.hash.crc32` on Bun, `zlib.crc32` on Node (≥ 20.15 / 22.2) and Deno — and a table-driven slicing-by-8 one
 * otherwise. All three give identical values (crc32.test.ts). Why native: checksums are on by default for `.vcap`
 * (format reference §5.1), and the native ones run at 3.5 GB/s (Node) to tens of GB/s (Bun, Deno: hardware CRC)
 * against about 1 GB/s for the table, which keeps a chunk's CRC small next to writing it.
 */
export type Crc32Append = (crc: number, bytes: Uint8Array) => number;

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

/** The portable implementation (slicing-by-8); exported so tests can hold the native ones against it. */
export const tableCrc32Append: Crc32Append = (crc, bytes) => {
  const t = TABLES;
  let c = ~crc >>> 0;
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
  return ~c >>> 0;
};

/** The native implementations this runtime offers, by name (for tests and the bench's description). */
export function nativeCrc32Implementations(): Record<string, Crc32Append> {
  const out: Record<string, Crc32Append> = {};
  const bun = (globalThis as { Bun?: { hash?: { crc32?: (data: Uint8Array, seed?: number) => number } } }).Bun;
  const bunCrc = bun?.hash?.crc32;
  if (typeof bunCrc === 'function') out['Bun.hash.crc32'] = (crc, bytes) => bunCrc(bytes, crc) >>> 0;
  const zlibCrc = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (typeof zlibCrc === 'function') out['zlib.crc32'] = (crc, bytes) => zlibCrc(bytes, crc) >>> 0;
  return out;
}

function pick(): { name: string; append: Crc32Append } {
  const natives = nativeCrc32Implementations();
  for (const name of ['Bun.hash.crc32', 'zlib.crc32']) {
    const append = natives[name];
    // A native implementation that disagrees with the standard check value is not used.
    if (append && append(0, CHECK_INPUT) === CHECK_VALUE) return { name, append };
  }
  return { name: 'table', append: tableCrc32Append };
}

const CHECK_INPUT = new TextEncoder().encode('123456789');
const CHECK_VALUE = 0xcbf43926;
const chosen = pick();

/** Which implementation this runtime uses: `Bun.hash.crc32`, `zlib.crc32` or `table`. */
export const CRC32_IMPLEMENTATION = chosen.name;

/** Continues a CRC (`crc` = the CRC of the bytes before, 0 for none) over `bytes`. */
export const crc32Append: Crc32Append = chosen.append;

/** CRC-32 of `bytes`. */
export function crc32(bytes: Uint8Array): number {
  return crc32Append(0, bytes);
}

// --- combining ---------------------------------------------------------------------------------------------------

const POLY = 0xedb88320;

/** a(x)·b(x) mod p(x), reflected (zlib's `multmodp`). */
function multModP(a: number, b: number): number {
  let m = 0x80000000;
  let p = 0;
  for (;;) {
    if (a & m) {
      p ^= b;
      if ((a & (m - 1)) === 0) break;
    }
    m >>>= 1;
    b = b & 1 ? (b >>> 1) ^ POLY : b >>> 1;
  }
  return p >>> 0;
}

/** x^(2^k) mod p(x) for k = 0..31 (zlib's `x2n_table`). */
const X2N = (() => {
  const t = new Uint32Array(32);
  let p = 0x40000000; // x^1
  t[0] = p;
  for (let k = 1; k < 32; k++) t[k] = p = multModP(p, p);
  return t;
})();

/** x^(n·2^k) mod p(x). */
function x2nModP(n: number, k: number): number {
  let p = 0x80000000; // x^0
  while (n > 0) {
    if (n % 2 === 1) p = multModP(X2N[k & 31]!, p);
    n = Math.floor(n / 2);
    k++;
  }
  return p;
}

/**
 * The CRC of `a ++ b` from `crc32(a)`, `crc32(b)` and `b.length` (zlib's `crc32_combine`): lets a writer checksum a
 * stretch of bytes once and use it both for a chunk's CRC and for the data section's, and checksum a chunk whose header
 * is only known after its records.
 */
export function crc32Combine(crcA: number, crcB: number, lengthB: number): number {
  return (multModP(x2nModP(lengthB, 3), crcA) ^ crcB) >>> 0;
}
