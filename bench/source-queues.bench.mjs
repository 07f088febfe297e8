#!/usr/bin/env node
// Issue 23's writer figure, one process, results to bench/results/source-queues-<runtime>.json: the writer's
// throughput with per-source queues against one queue. The same frames (8 urls in turn, 64 B and 4 KiB, .vcap) go
// through the default worker BagWriter with `await writer.write()` per frame (lossless: every frame is written, so
// the figure is the writer's throughput, not how much it drops), three ways, alternating within each repetition; a
// ratio is the median over the repetitions of that repetition's own ratio (a pair run back to back shares the
// machine's state, where medians taken apart did not: on a loaded machine they moved a ratio by 0.3–0.4 run to run):
//   oneQueue    `sources: { all: { urls: ['dds://*'] } }`: the 8 urls are one source, one queue (baseline)
//   perSource   no `sources`: every url is a source of its own (the default)
//   perLimits   every url a named source with its own frame and byte limits (checked, not reached)
//
//   node bench/source-queues.bench.mjs [--quick]       bun …       deno run -A --node-modules-dir=manual bench/source-queues.bench.mjs
//   --quick: fewer frames and repetitions; --smoke: tiny, harness check only.
// Files go to /dev/shm where it exists, as in ab-builds.mjs: the three differ only in the producer's and the worker's
// bookkeeping, and the 600 MiB of each 4 KiB run going through the disk's write-back is the same for all three, only
// noise here. The earlier 5 repetitions of 500k × 64 B on disk gave 4 KiB ratios of 0.58–1.50 between runs.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ActionType, BagWriter, SchemaType } from '../packages/bag/dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;
const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'vlink-sources-bench-'));
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
let fileNo = 0;

const URLS = Array.from({ length: 8 }, (_, i) => `dds://bench/source${i}`);
const CASES = [
  { size: 64, frames: smoke ? 20_000 : quick ? 200_000 : 1_500_000 },
  { size: 4096, frames: smoke ? 5_000 : quick ? 50_000 : 150_000 },
];
const REPS = smoke ? 1 : quick ? 3 : 9;

const CONTENDERS = {
  oneQueue: () => ({ sources: { all: { urls: ['dds://*'] } } }),
  perSource: () => ({}),
  perLimits: () => ({
    sources: Object.fromEntries(URLS.map((url) => [url, { maxFrames: 1_000_000, maxBytes: 1024 * 1024 * 1024 }])),
  }),
};

function frames(size) {
  return URLS.map((url, u) => {
    const data = new Uint8Array(size);
    for (let i = 0; i < size; i++) data[i] = (i * 31 + u) & 0xff;
    return { timestamp: 0, url, data, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish };
  });
}

async function run(name, size, n) {
  const path = join(dir, `f${fileNo++}.vcap`);
  const templates = frames(size);
  const t0 = performance.now();
  const writer = await BagWriter.create(path, { ...CONTENDERS[name](), summary: false });
  for (let i = 0; i < n; i++) {
    const t = templates[i & 7];
    await writer.write({ ...t, timestamp: i });
  }
  await writer.close();
  const ms = performance.now() - t0;
  const stats = writer.stats();
  rmSync(path, { force: true });
  if (stats.writtenFrames !== n) throw new Error(`${name}: ${stats.writtenFrames} of ${n} frames written`);
  return n / (ms / 1000);
}

const rows = [];
for (const { size, frames: n } of CASES) {
  const rates = Object.fromEntries(Object.keys(CONTENDERS).map((k) => [k, []]));
  // Warm-up (JIT, worker pool): each contender once, since each takes its own paths (named sources, limits).
  for (const name of Object.keys(CONTENDERS)) await run(name, size, Math.min(n, 50_000));
  for (let rep = 0; rep < REPS; rep++) {
    // Alternating, so drift in the machine's load touches every contender alike.
    const order = rep % 2 ? Object.keys(CONTENDERS).reverse() : Object.keys(CONTENDERS);
    for (const name of order) rates[name].push(await run(name, size, n));
  }
  const row = {
    size,
    frames: n,
    reps: REPS,
    oneQueueFramesPerS: round(median(rates.oneQueue), 0),
    perSourceFramesPerS: round(median(rates.perSource), 0),
    perLimitsFramesPerS: round(median(rates.perLimits), 0),
  };
  const pairedRatio = (name) => round(median(rates[name].map((rate, rep) => rate / rates.oneQueue[rep])), 3);
  row.perSourceRatio = pairedRatio('perSource');
  row.perLimitsRatio = pairedRatio('perLimits');
  row.runs = Object.fromEntries(Object.entries(rates).map(([k, v]) => [k, v.map((x) => round(x, 0))]));
  rows.push(row);
  console.log(
    `${size} B × ${n}: one queue ${row.oneQueueFramesPerS} frames/s, per source ${row.perSourceFramesPerS} (${row.perSourceRatio}×), own limits ${row.perLimitsFramesPerS} (${row.perLimitsRatio}×)`,
  );
}

const out = {
  bench: 'source-queues',
  runtime,
  runtimeVersion,
  date: new Date().toISOString(),
  quick,
  machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, dir },
  contenders: {
    oneQueue:
      "BagWriter defaults (worker mode, .vcap, 4 MiB uncompressed chunks, fsync at close; files on /dev/shm) with the 8 urls grouped into one source (`sources: { all: { urls: ['dds://*'] } }`): one queue",
    perSource: 'the same, without `sources`: each url its own source (the default)',
    perLimits:
      'the same, each url a named source with its own limits (1,000,000 frames, 1 GiB: checked on every push, never reached, so only their cost shows)',
    loop: '`await writer.write(frame)` per frame, 8 urls in turn; ratio: median of each repetition’s ratio',
  },
  rows,
};
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `source-queues-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
