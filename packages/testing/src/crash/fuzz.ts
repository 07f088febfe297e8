import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ActionType,
  BagError,
  BagReader,
  BagWriter,
  extensionOf,
  repairBag,
  SchemaType,
  type Frame,
  type WriterConfig,
} from '@vlink/bag';
import { patternBytes, SAMPLE_PROTO_SCHEMA } from '@vlink/bag-core/testing';

/**
 * The corrupted-input harness: valid recordings of each format, mutated by a seeded PRNG (bit flips, overwritten
 * bytes, truncation at record (MCAP) / page (SQLite) boundaries, huge length fields, zeroed and spliced ranges, and
 * for split recordings garbage manifests), then opened and read every way a user can. Only typed `BagError`s may
 * escape. A case is a pure function of (format, seed, index), so any finding can be replayed alone.
 */
export type FuzzFormat = '.vdb' | '.vcap' | '.vdbx' | '.vcapx';
export const FUZZ_FORMATS: readonly FuzzFormat[] = ['.vdb', '.vcap', '.vdbx', '.vcapx'];

/** A valid recording: its files by name (`main` is the bag, or the manifest of a split recording). */
export interface FuzzBase {
  name: string;
  main: string;
  files: Map<string, Uint8Array>;
  /** Every message sits in a chunk with a CRC: no read may return a frame that differs from what was written. */
  checksummed: boolean;
}

export interface FuzzCase {
  index: number;
  base: string;
  /** The file that was mutated and how. */
  target: string;
  mutation: string;
  main: string;
  files: Map<string, Uint8Array>;
  checksummed: boolean;
}

export interface CaseOutcome {
  /** `ok`: everything ran or failed with a `BagError`. */
  status: 'ok' | 'finding';
  kind?: 'untyped-error' | 'fix-then-check' | 'memory' | 'corrupted-frame' | 'repair-lost-readable';
  detail?: string;
  /** How many of the two opens (strict, tryToFix) succeeded, and the frames read by the tryToFix one. */
  opened: number;
  frames: number;
  ms: number;
}

const START = 1_700_000_000_000;
const MiB = 1024 * 1024;

/** A deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fuzzFrames(): Frame[] {
  const frames: Frame[] = [];
  for (let i = 0; i < 160; i++) {
    const k = i % 4;
    const timestamp = 1000 + i * 5000;
    if (k === 0)
      frames.push({
        timestamp,
        url: 'dds://camera',
        data: patternBytes(200 + (i % 9) * 170, i),
        serType: 'pb.Image',
        schemaType: SchemaType.Protobuf,
        actionType: ActionType.Publish,
      });
    else if (k === 1)
      frames.push({
        timestamp,
        url: 'dds://imu',
        data: patternBytes(24 + (i % 5), i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Subscribe,
      });
    else if (k === 2)
      frames.push({
        timestamp,
        url: 'dds://param',
        data: patternBytes(8, i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: i % 8 === 2 ? ActionType.Set : ActionType.Get,
      });
    else
      frames.push({
        timestamp,
        url: 'dds://blob',
        data: new Uint8Array(600).fill(i & 0xff),
        serType: '',
        schemaType: SchemaType.Unknown,
        actionType: ActionType.Publish,
      });
  }
  return frames;
}

// CRCs are on by default; they are spelled out here because the harness relies on them (see `checksummed`).
const CONFIGS: Record<FuzzFormat, Array<Partial<WriterConfig>>> = {
  '.vcap': [
    { compress: 'zstd', enableChunkCrc: true, cacheSize: 3000 },
    { cacheSize: 4096, enableChunkCrc: true },
    { cacheSize: 0, enableChunkCrc: true },
  ],
  '.vdb': [{ compress: 'lzav' }, {}],
  '.vdbx': [{ compress: 'lzav', splitBySize: 24 * 1024 }],
  '.vcapx': [{ compress: 'zstd', cacheSize: 3000, enableChunkCrc: true, splitBySize: 24 * 1024 }],
};

const ORIGINALS = new Map(fuzzFrames().map((f) => [`${f.url}@${f.timestamp}`, f.data]));

/** A frame as one of `fuzzFrames` was written (same url, time and bytes). */
function isOriginal(frame: Frame): boolean {
  const data = ORIGINALS.get(`${frame.url}@${frame.timestamp}`);
  return data !== undefined && data.length === frame.data.length && data.every((b, i) => b === frame.data[i]);
}

/** Records the base files of a format into `dir` and loads them. */
export async function buildBases(format: FuzzFormat, dir: string): Promise<FuzzBase[]> {
  const bases: FuzzBase[] = [];
  for (const [n, config] of CONFIGS[format].entries()) {
    const sub = join(dir, `base-${n}`);
    rmSync(sub, { recursive: true, force: true });
    mkdirSync(sub, { recursive: true });
    const main = `bag${format}`;
    const writer = await BagWriter.create(join(sub, main), {
      ...config,
      syncMode: true,
      startTimestamp: START,
      tagName: 'fuzz',
    });
    writer.pushSchema(SAMPLE_PROTO_SCHEMA);
    for (const frame of fuzzFrames())
      if (writer.push(frame) < 0) throw new Error(`fuzz base: push failed: ${writer.stats().lastError}`);
    await writer.close();
    const files = new Map<string, Uint8Array>();
    for (const name of readdirSync(sub).sort()) files.set(name, new Uint8Array(readFileSync(join(sub, name))));
    const checksummed = format.startsWith('.vcap') && (config.cacheSize ?? 1) > 0 && config.enableChunkCrc !== false;
    bases.push({ name: `${format}#${n}`, main, files, checksummed });
  }
  return bases;
}

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
  return { index, base: base.name, target, mutation, main: base.main, files, checksummed: base.checksummed };
}

function mutateBinary(original: Uint8Array, name: string, rand: () => number): [string, Uint8Array] {
  const int = (n: number) => Math.floor(rand() * n);
  const bytes = original.slice();
  const view = new DataView(bytes.buffer);
  const size = bytes.length;
  const sqlite = name.endsWith('.vdb');
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

/**
 * Runs one case in `dir`: opens the bag strict and with `tryToFix`, reads info, schemas and every frame, runs
 * `check()`, then repairs a copy with `fix()`. A `.vcap` that `fix()` repaired must pass `check()`.
 */
export async function runCase(fuzzCase: FuzzCase, dir: string): Promise<CaseOutcome> {
  const started = performance.now();
  const outcome: CaseOutcome = { status: 'ok', opened: 0, frames: 0, ms: 0 };
  const finding = (kind: NonNullable<CaseOutcome['kind']>, detail: string) => {
    if (outcome.status === 'ok') Object.assign(outcome, { status: 'finding', kind, detail });
  };
  const untyped = (where: string, error: unknown) => {
    if (!BagError.isInstance(error))
      finding(
        'untyped-error',
        `${where}: ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ''}` : String(error)}`,
      );
  };
  const place = (sub: string): string => {
    const at = join(dir, sub);
    rmSync(at, { recursive: true, force: true });
    mkdirSync(at, { recursive: true });
    for (const [name, bytes] of fuzzCase.files) writeFileSync(join(at, name), bytes);
    return join(at, fuzzCase.main);
  };

  for (const tryToFix of [false, true]) {
    const path = place(tryToFix ? 'fix-read' : 'read');
    let reader: BagReader | undefined;
    try {
      reader = await BagReader.create(path, { tryToFix });
      outcome.opened++;
      reader.getInfo();
      reader.getSchemas();
      let n = 0;
      try {
        for await (const frame of reader.frames()) {
          n++;
          // Chunks with CRCs: a damaged byte must surface as an error, never as a frame with other bytes.
          if (fuzzCase.checksummed && !isOriginal(frame))
            finding('corrupted-frame', `${frame.url} @${frame.timestamp}: bytes differ from what was written`);
        }
      } catch (error) {
        untyped('frames()', error);
      }
      if (tryToFix) outcome.frames = n;
      try {
        // A window and a url filter take other paths (block skipping, index queries).
        for await (const _ of reader.frames({ beginTime: 100, endTime: 500, filterUrls: ['dds://imu'] })) void _;
      } catch (error) {
        untyped('frames(window)', error);
      }
      await reader.check();
    } catch (error) {
      untyped(tryToFix ? 'open/read with tryToFix' : 'open/read', error);
    } finally {
      try {
        reader?.close();
      } catch (error) {
        untyped('close', error);
      }
    }
  }

  const path = place('fix');
  let fixer: BagReader | undefined;
  try {
    fixer = await BagReader.create(path, { tryToFix: true, readOnly: false });
    if ((await fixer.fix()) && fuzzCase.main.endsWith('.vcap') && !(await fixer.check())) {
      const report = (fixer as unknown as { backend: { lastCheckReport?: { problems: string[] } } }).backend
        .lastCheckReport;
      finding('fix-then-check', report?.problems.slice(0, 5).join('; ') ?? 'check() false after fix()');
    }
    for await (const _ of fixer.frames()) void _;
  } catch (error) {
    untyped('fix', error);
  } finally {
    try {
      fixer?.close();
    } catch (error) {
      untyped('close after fix', error);
    }
  }

  // repairBag on a copy: the repaired bag never holds fewer frames than a reader could read from the damaged one.
  const input = place('repair');
  try {
    const report = await repairBag(input, { output: join(dir, 'repair', `out${extensionOf(input)}`) });
    if (report.frames < report.readableFrames)
      finding('repair-lost-readable', `${report.frames} frames repaired, ${report.readableFrames} were readable`);
  } catch (error) {
    untyped('repairBag', error);
  }

  // A buffer sized from an untrusted length would show here (live ArrayBuffers right after the case, before a GC).
  const arrayBuffers = process.memoryUsage().arrayBuffers;
  if (arrayBuffers > 512 * MiB)
    finding('memory', `${Math.round(arrayBuffers / MiB)} MiB of ArrayBuffers after the case`);
  outcome.ms = performance.now() - started;
  return outcome;
}
