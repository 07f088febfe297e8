import { prng } from '@vlink/fixtures/random';
import type { FuzzBase } from './fuzz-bases.js';

/**
 * The mutations of the fuzz harness: for binary files bit flips, overwritten bytes, truncation (anywhere, or at a
 * record (MCAP) / page (SQLite) boundary), huge length fields, zeroed and spliced ranges; for the manifest of a split
 * recording garbage JSON, deep nesting, odd values and hostile segment names. Every choice comes from a seeded PRNG,
 * so a case is a pure function of (bases, seed, index) and any finding replays alone.
 */
export interface FuzzCase {
  index: number;
  base: string;
  /** The file that was mutated and how. */
  target: string;
  mutation: string;
  main: string;
  files: Map<string, Uint8Array>;
  checksummed: boolean;
  /** Frames written into the base, when known: no read or repair of a damaged copy can yield more. */
  written?: number;
}

export { prng };

/** Case `index` of `seed`: a base, a file of it, a mutation. */
export function makeCase(bases: readonly FuzzBase[], seed: number, index: number): FuzzCase {
  const rand = prng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const int = (n: number) => Math.floor(rand() * n);
  const base = bases[int(bases.length)]!;
  const names = [...base.files.keys()];
  const split = base.main.endsWith('x');
  const target = split && rand() < 0.5 ? base.main : names[int(names.length)]!;
  const original = base.files.get(target)!;
  let mutation: string;
  let bytes: Uint8Array;
  if (split && target === base.main && rand() < 0.6) [mutation, bytes] = mutateManifest(original, rand);
  else [mutation, bytes] = mutateBinary(original, target, rand);
  const files = new Map(base.files);
  files.set(target, bytes);
  return {
    index,
    base: base.name,
    target,
    mutation,
    main: base.main,
    files,
    checksummed: base.checksummed,
    ...(base.written === undefined ? {} : { written: base.written }),
  };
}

function mutateBinary(original: Uint8Array, name: string, rand: () => number): [string, Uint8Array] {
  const int = (n: number) => Math.floor(rand() * n);
  const bytes = original.slice();
  const view = new DataView(bytes.buffer);
  const size = bytes.length;
  const sqlite = name.endsWith('.vdb') || name.endsWith('.db3');
  const boundaries = sqlite ? pageBoundaries(size) : mcapBoundaries(original);
  const HUGE = [0xffffffff, 0x7fffffff, 0x80000000, size, size * 2 + 1, 0x00ffffff];
  switch (int(8)) {
    case 0: {
      const n = 1 + int(8);
      const at: number[] = [];
      for (let i = 0; i < n; i++) {
        const bit = int(size * 8);
        bytes[bit >> 3]! ^= 1 << (bit & 7);
        at.push(bit);
      }
      return [`flip bits ${at.join(',')}`, bytes];
    }
    case 1: {
      const at = int(size);
      const n = 1 + int(32);
      for (let i = at; i < Math.min(size, at + n); i++) bytes[i] = int(256);
      return [`overwrite ${n} bytes at ${at}`, bytes];
    }
    case 2: {
      const cut = boundaries[int(boundaries.length)]!;
      return [`truncate at ${sqlite ? 'page' : 'record'} boundary ${cut}`, original.slice(0, cut)];
    }
    case 3: {
      const cut = int(size);
      return [`truncate at ${cut}`, original.slice(0, cut)];
    }
    case 4: {
      const value = HUGE[int(HUGE.length)]!;
      if (sqlite) {
        // The database header's size fields, a page header's fields, or an LZAV frame's original size.
        const frames = findAll(original, [0x17, 0x49, 0xb2, 0x6f]);
        const choice = int(3);
        if (choice === 0 && frames.length > 0) {
          const at = frames[int(frames.length)]! + 4;
          view.setUint32(at, value);
          return [`lzav frame size ${value} at ${at}`, bytes];
        }
        const at =
          choice === 1 ? [16, 28, 32, 36, 40, 44, 48, 52, 56][int(9)]! : boundaries[int(boundaries.length)]! + int(12);
        if (at + 4 <= size) view.setUint32(at, value);
        return [`u32 ${value} at ${at}`, bytes];
      }
      const record = boundaries[int(boundaries.length)]!;
      if (record + 9 > size) return ['no-op', bytes];
      if (rand() < 0.5) {
        const big = [2n ** 32n - 1n, 2n ** 53n, 2n ** 64n - 1n, BigInt(size), BigInt(size) * 2n, 0n][int(6)]!;
        view.setBigUint64(record + 1, big, true);
        return [`record length ${big} at ${record}`, bytes];
      }
      const at = record + 9 + 4 * int(12);
      if (at + 4 <= size) view.setUint32(at, value, true);
      return [`u32 ${value} at ${at} (record at ${record})`, bytes];
    }
    case 5: {
      const at = int(size);
      const n = 1 + int(4096);
      bytes.fill(0, at, Math.min(size, at + n));
      return [`zero ${n} bytes at ${at}`, bytes];
    }
    case 6: {
      const from = int(size);
      const to = int(size);
      const n = Math.min(1 + int(2048), size - from, size - to);
      bytes.copyWithin(to, from, from + n);
      return [`copy ${n} bytes from ${from} to ${to}`, bytes];
    }
    default: {
      // Truncate at a boundary and garble the last record before it.
      const cut = boundaries[int(boundaries.length)]!;
      const out = original.slice(0, cut);
      if (out.length > 0) out[int(out.length)] = int(256);
      return [`truncate at ${cut} and garble a byte`, out];
    }
  }
}

const decoder = new TextDecoder();
const encoder = new TextEncoder();

function mutateManifest(original: Uint8Array, rand: () => number): [string, Uint8Array] {
  const int = (n: number) => Math.floor(rand() * n);
  const text = decoder.decode(original);
  const json = JSON.parse(text) as Record<string, unknown>;
  const header = json['VLinkHeader'] as Record<string, unknown>;
  const urls = json['VLinkUrls'] as Array<Record<string, unknown>>;
  const files = json['VLinkFiles'] as string[];
  const WEIRD: unknown[] = [
    null,
    -1,
    1e308,
    -1e308,
    2 ** 64,
    0.5,
    '',
    'x',
    [],
    {},
    true,
    '9'.repeat(400),
    'a'.repeat(100_000),
    [[[[[]]]]],
  ];
  const weird = () => WEIRD[int(WEIRD.length)];
  const out = (what: string, value: unknown): [string, Uint8Array] => [
    what,
    encoder.encode(typeof value === 'string' ? value : JSON.stringify(value, null, 4)),
  ];
  switch (int(8)) {
    case 0:
      return out('not JSON', `${text.slice(0, int(text.length))}}{,`);
    case 1: {
      const depth = 1000 + int(200_000);
      return out(`nested ${depth} deep`, '['.repeat(depth) + ']'.repeat(depth));
    }
    case 2: {
      const keys = Object.keys(header);
      const key = keys[int(keys.length)]!;
      const value = weird();
      header[key] = value;
      return out(`VLinkHeader.${key} = ${short(value)}`, json);
    }
    case 3: {
      if (urls.length === 0) return out('VLinkUrls = "x"', { ...json, VLinkUrls: 'x' });
      const url = urls[int(urls.length)]!;
      const keys = Object.keys(url);
      const key = keys[int(keys.length)]!;
      const value = weird();
      url[key] = value;
      return out(`VLinkUrls[].${key} = ${short(value)}`, json);
    }
    case 4: {
      const names = [
        '../escape.vdb',
        '/etc/passwd',
        'missing.vdb',
        '',
        '.',
        '..',
        'a\\b.vdb',
        'C:x.vdb',
        'nul\0.vdb',
        'bag.vdbx',
        files[0] ?? 'x',
      ];
      const name = names[int(names.length)]!;
      const list = [...files];
      list.splice(int(list.length + 1), rand() < 0.5 ? 1 : 0, name);
      json['VLinkFiles'] = list;
      return out(`VLinkFiles with ${JSON.stringify(name)}`, json);
    }
    case 5: {
      const many = Array.from({ length: 1 + int(20_000) }, () => files[0] ?? 'x');
      json['VLinkFiles'] = rand() < 0.5 ? many : weird();
      return out(`VLinkFiles = ${short(json['VLinkFiles'])}`, json);
    }
    case 6: {
      const keys = ['VLinkHeader', 'VLinkUrls', 'VLinkFiles'];
      const key = keys[int(3)]!;
      if (rand() < 0.5) delete json[key];
      else json[key] = weird();
      return out(`${key} removed or replaced`, json);
    }
    default: {
      const copy = original.slice();
      for (let i = 0, n = 1 + int(6); i < n; i++) copy[int(copy.length)] = int(256);
      return ['garbled manifest bytes', copy];
    }
  }
}

function short(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…(${text.length})` : text;
}

/** Top-level record starts of a valid MCAP file, plus 0, the end of the header magic and the file end. */
function mcapBoundaries(bytes: Uint8Array): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = [0, 8];
  for (let p = 8; p + 9 <= bytes.length - 8; ) {
    const length = Number(view.getBigUint64(p + 1, true));
    p += 9 + length;
    out.push(p);
  }
  out.push(bytes.length);
  return out;
}

function pageBoundaries(size: number): number[] {
  const out: number[] = [0, 100];
  for (let p = 16384; p < size; p += 16384) out.push(p);
  out.push(size);
  return out;
}

function findAll(bytes: Uint8Array, needle: number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i + needle.length <= bytes.length; i++) if (needle.every((b, k) => bytes[i + k] === b)) out.push(i);
  return out;
}
