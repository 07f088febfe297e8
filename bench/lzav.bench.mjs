#!/usr/bin/env node
// LZAV codec benchmark: for each vector in fixtures/lzav (plus two synthetic 1 MiB inputs) measures our
// compressor (default and high-ratio), decompressor and compression-frame round trip, and compares our compressed
// sizes with the reference C output (.lzav / .lzavhi). Prints a table and merges the numbers, keyed by runtime,
// into bench/results/lzav.json.
// Usage: node bench/lzav.bench.mjs [--quick]      bun bench/lzav.bench.mjs      deno run -A bench/lzav.bench.mjs
// --smoke: a few milliseconds per measurement, only to check the harness works; results go to bench/results/smoke/.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lzav } from '../packages/core/dist/codecs/lzav/index.js';
import { compressFrame, decompressFrame } from '../packages/core/dist/codecs/compression-frame.js';
import { fixturesDir } from '@vlink/fixtures';

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes('--quick');
const smoke = process.argv.includes('--smoke');
const ROUND_MS = smoke ? 2 : quick ? 40 : 150;
const ROUNDS = smoke ? 1 : quick ? 3 : 7;

const runtime =
  typeof globalThis.Bun !== 'undefined'
    ? `bun ${globalThis.Bun.version}`
    : typeof globalThis.Deno !== 'undefined'
      ? `deno ${globalThis.Deno.version.deno}`
      : `node ${process.versions.node}`;

/**
 * Throughput in MB/s (10^6 bytes): the best of several timed rounds, after a warm-up round. Best-of rather than
 * median because this often runs on shared machines, where interference only ever makes a round slower.
 */
function throughput(bytes, fn) {
  const rates = [];
  for (let round = -1; round < ROUNDS; round++) {
    let reps = 0;
    const start = performance.now();
    let elapsed = 0;
    do {
      fn();
      reps++;
      elapsed = performance.now() - start;
    } while (elapsed < ROUND_MS);
    if (round >= 0) rates.push((bytes * reps) / 1e3 / elapsed);
  }
  return Math.max(...rates);
}

function synthetic() {
  let s = 12345;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return s >>> 0;
  };
  const words = ['frame', 'url', '/camera/front', 'elapsed', 'lidar', 'points', 'x', 'y', 'z', '0.125', 'odom', 'imu'];
  const text = new Uint8Array(1 << 20);
  for (let i = 0; i < text.length; ) {
    for (const ch of words[next() % words.length]) if (i < text.length) text[i++] = ch.charCodeAt(0);
    if (i < text.length) text[i++] = 32;
  }
  // A slowly varying float32 signal, like IMU or point-cloud coordinates.
  const floats = new Float32Array(1 << 18);
  let v = 0;
  for (let i = 0; i < floats.length; i++) floats[i] = Math.round((v += (next() / 2 ** 32 - 0.5) * 0.1) * 1000) / 1000;
  return [
    { name: 'synthetic-text-1m', raw: text },
    { name: 'synthetic-float-1m', raw: new Uint8Array(floats.buffer) },
  ];
}

const dir = join(fixturesDir, 'lzav');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
const inputs = [
  ...manifest.vectors.map((v) => ({
    name: v.name,
    raw: new Uint8Array(readFileSync(join(dir, `${v.name}.raw`))),
    refSize: new Uint8Array(readFileSync(join(dir, `${v.name}.lzav`))),
    refHi: new Uint8Array(readFileSync(join(dir, `${v.name}.lzavhi`))),
  })),
  ...synthetic(),
];

const rows = [];
for (const { name, raw, refSize, refHi } of inputs) {
  const packed = lzav.compress(raw);
  const packedHi = lzav.compress(raw, { level: 9 });
  const same = (a, b) => b !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
  const frameable = raw.length > 0 && raw.length <= 1 << 20;
  rows.push({
    vector: name,
    bytes: raw.length,
    compressMBs: throughput(raw.length, () => lzav.compress(raw)),
    compressHiMBs: throughput(raw.length, () => lzav.compress(raw, { level: 9 })),
    decompressMBs: throughput(raw.length, () => lzav.decompress(packed, raw.length)),
    decompressHiMBs: throughput(raw.length, () => lzav.decompress(packedHi, raw.length)),
    frameRoundTripMBs: frameable ? throughput(raw.length, () => decompressFrame(compressFrame(raw, 3))) : null,
    size: packed.length,
    refSize: refSize?.length ?? null,
    sizeHi: packedHi.length,
    refSizeHi: refHi?.length ?? null,
    identical: refSize === undefined ? null : same(packed, refSize) && same(packedHi, refHi),
  });
}

const fmt = (x, digits = 0) => (x === null ? '-' : x.toFixed(digits));
const columns = [
  ['vector', (r) => r.vector],
  ['bytes', (r) => String(r.bytes)],
  ['comp MB/s', (r) => fmt(r.compressMBs)],
  ['hi MB/s', (r) => fmt(r.compressHiMBs)],
  ['decomp MB/s', (r) => fmt(r.decompressMBs)],
  ['decomp(hi) MB/s', (r) => fmt(r.decompressHiMBs)],
  ['frame rt MB/s', (r) => fmt(r.frameRoundTripMBs)],
  ['size / ref', (r) => `${r.size} / ${r.refSize ?? '-'}`],
  ['hi size / ref', (r) => `${r.sizeHi} / ${r.refSizeHi ?? '-'}`],
  ['identical', (r) => (r.identical === null ? '-' : r.identical ? 'yes' : 'NO')],
];
const cells = rows.map((r) => columns.map(([, get]) => get(r)));
const widths = columns.map(([title], i) => Math.max(title.length, ...cells.map((c) => c[i].length)));
const line = (values) =>
  `| ${values.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join(' | ')} |`;
console.log(`LZAV benchmark on ${runtime} (MB = 10^6 bytes, best of ${ROUNDS} rounds)`);
console.log(line(columns.map(([title]) => title)));
console.log(`|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`);
for (const c of cells) console.log(line(c));

const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
const resultsFile = join(resultsDir, 'lzav.json');
mkdirSync(resultsDir, { recursive: true });
const all = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};
all[runtime.split(' ')[0]] = { runtime, date: new Date().toISOString(), quick, rows };
writeFileSync(resultsFile, `${JSON.stringify(all, null, 2)}\n`);
console.log(`\nwrote ${resultsFile}`);
