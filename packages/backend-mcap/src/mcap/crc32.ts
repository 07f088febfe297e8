import { createRequire } from 'node:module';
import * as zlib from 'node:zlib';

/**
 * CRC-32 (IEEE 802.3, reflected, as MCAP uses) in its final form: `crc32(bytes)` is the checksum, and
 * `crc32Append(crc32(a), b) === crc32(a ++ b)`. A native implementation is used when there is one — `Bun.hash.crc32`
 * on Bun, `zlib.crc32` on Deno, `@node-rs/crc32` (an optional dependency) then `zlib.crc32` (≥ 20.15 / 22.2) on Node —
 * and a table-driven slicing-by-8 one otherwise. All give identical values (crc32.test.ts). Why native: checksums are
 * on by default for `.vcap` (format reference §5.1) and every byte written is checksummed once; measured on 1 MiB
 * buffers, Bun's and Deno's run at 25–50 GiB/s (hardware CRC), Node's zlib at 3–4 GiB/s (software: Node's zlib has
 * no carry-less-multiply path) and `@node-rs/crc32` (Rust crc32fast, PCLMULQDQ) at about 13 GiB/s on Node, against
 * about 1 GiB/s for the table. On Node, zlib's CRC alone took a third of the time of writing 1 MiB frames to disk.
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

/** Bun and Deno: their zlib CRC is hardware-accelerated, faster than the addon, which is not even loaded there. */
const HARDWARE_ZLIB =
  typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined' ||
  typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';

/** The native implementations this runtime offers, fastest first (for tests and the bench's description). */
export function nativeCrc32Implementations(): Record<string, Crc32Append> {
  const out: Record<string, Crc32Append> = {};
  const bun = (globalThis as { Bun?: { hash?: { crc32?: (data: Uint8Array, seed?: number) => number } } }).Bun;
  const bunCrc = bun?.hash?.crc32;
  if (typeof bunCrc === 'function') out['Bun.hash.crc32'] = (crc, bytes) => bunCrc(bytes, crc) >>> 0;
  const addon = HARDWARE_ZLIB ? undefined : loadNodeRsCrc32();
  if (addon) out['@node-rs/crc32'] = (crc, bytes) => addon(bytes, crc) >>> 0;
  const zlibCrc = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;
  if (typeof zlibCrc === 'function') out['zlib.crc32'] = (crc, bytes) => zlibCrc(bytes, crc) >>> 0;
  return out;
}

type NodeRsCrc32 = (input: Uint8Array, initialState?: number) => number;

/** `@node-rs/crc32`'s `crc32` when the package and its binary for this platform are installed. */
function loadNodeRsCrc32(): NodeRsCrc32 | undefined {
  try {
    const loaded = createRequire(import.meta.url)('@node-rs/crc32') as { crc32?: unknown };
    return typeof loaded.crc32 === 'function' ? (loaded.crc32 as NodeRsCrc32) : undefined;
  } catch {
    return undefined; // not installed (it is optional), or no binary for this platform
  }
}

function pick(): { name: string; append: Crc32Append } {
  for (const [name, append] of Object.entries(nativeCrc32Implementations())) {
    // A native implementation that disagrees with the standard check value is not used.
    if (append && append(0, CHECK_INPUT) === CHECK_VALUE) return { name, append };
  }
  return { name: 'table', append: tableCrc32Append };
}

const CHECK_INPUT = new TextEncoder().encode('123456789');
const CHECK_VALUE = 0xcbf43926;
const chosen = pick();

/** Which implementation this runtime uses: `Bun.hash.crc32`, `@node-rs/crc32`, `zlib.crc32` or `table`. */
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
