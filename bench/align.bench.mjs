#!/usr/bin/env node
// Offline alignment throughput (issue 23), results to bench/results/align-<runtime>.json.
//
// A synthetic 10-minute teleoperation session in one .vcap (JSON payloads): /camera/front 30 Hz (frame metadata:
// seq, exposure, gain, width, height), /state 100 Hz (7 joint positions and velocities, a pose, a mode string),
// /action at a variable commit rate around 20 Hz (7 targets, a gripper, a result). Every message has a publish time a
// few ms before its log time.
//   align   `alignToFile` with base /camera/front on publish times, /state linear, /action previous, tolerance 50 ms,
//           missing ffill: one Parquet file (and, as a second case, CSV). Rows/s, and decoded frames/s of the bag.
//   decode  the baseline, in the same process: reading every frame of the same urls with `reader.frames()` and
//           decoding each with the same `PayloadDecoder` (what any alignment has to do at least once per message).
// Interleaved repetitions, medians; ratio = align's frames/s over plain decode's (1.00× = alignment costs nothing on
// top of decoding every message). Peak RSS growth during the align runs is reported too (memory must stay bounded).
//
//   node bench/align.bench.mjs [--quick]       bun …       deno run -A --node-modules-dir=manual bench/align.bench.mjs
//   --quick: a 2-minute session; --smoke: 10 s, harness check only (results to bench/results/smoke/).
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alignToFile } from '../packages/align/dist/index.js';
import { ActionType, BagReader, BagWriter, SchemaType } from '../packages/bag/dist/index.js';
import { PayloadDecoder } from '../packages/decode/dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;
const SECONDS = smoke ? 10 : quick ? 120 : 600;
const REPEATS = smoke ? 1 : 3;
const dir = mkdtempSync(join(tmpdir(), 'vlink-align-bench-'));
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const encoder = new TextEncoder();
const rss = () => (process.memoryUsage.rss ? process.memoryUsage.rss() : process.memoryUsage().rss);

/** Deterministic jitter in [-1, 1). */
function jitter(i, salt) {
  let x = (i + 1) * 2654435761 + salt * 40503;
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return ((x >>> 0) % 2000) / 1000 - 1;
}

function session() {
  const frames = [];
  const add = (url, publish, latencyUs, value) =>
    frames.push({ url, timestamp: Math.round(publish + latencyUs), publishTime: Math.round(publish), value });
  for (let i = 0; i < SECONDS * 30; i++) {
    add('/camera/front', i * 33_333.3 + jitter(i, 1) * 1500, 8000, {
      seq: i,
      exposureUs: 8000 + (i % 50),
      gain: 1.5,
      width: 1280,
      height: 720,
    });
  }
  for (let i = 0; i < SECONDS * 100; i++) {
    const t = i / 100;
    const q = Array.from({ length: 7 }, (_, j) => Math.sin(t + j));
    add('/state', i * 10_000, 300, {
      joints: Object.fromEntries(q.map((v, j) => [`q${j}`, v])),
      velocities: Object.fromEntries(q.map((_, j) => [`dq${j}`, Math.cos(t + j)])),
      pose: { x: Math.cos(t), y: Math.sin(t), z: 0.4 },
      mode: i % 1000 < 900 ? 'teleop' : 'hold',
    });
  }
  for (let t = 40_000, k = 0; t < SECONDS * 1e6; t += [40, 60, 30, 80, 45][k % 5] * 1000, k++) {
    add('/action', t, 2000 + (k % 7) * 300, {
      targets: Object.fromEntries(Array.from({ length: 7 }, (_, j) => [`t${j}`, Math.sin(t / 1e6 + j)])),
      gripper: k % 2 === 0 ? 0.8 : 0.1,
      result: k % 97 === 0 ? 'failed' : 'full',
    });
  }
  return frames.sort((a, b) => a.timestamp - b.timestamp);
}

const bag = join(dir, 'session.vcap');
const messages = session();
{
  const writer = await BagWriter.create(bag, { maxQueueTimeMs: 0, startTimestamp: 1_700_000_000_000 });
  for (const m of messages) {
    await writer.write({
      timestamp: m.timestamp,
      publishTime: m.publishTime,
      url: m.url,
      data: encoder.encode(JSON.stringify(m.value)),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
}
const bagBytes = statSync(bag).size;

const OPTIONS = {
  base: { url: '/camera/front' },
  timeBase: 'publish',
  match: { '/state': 'linear', '/action': 'previous' },
  toleranceUs: 50_000,
  missing: 'ffill',
};

async function runAlign(format) {
  const reader = await BagReader.create(bag);
  const out = join(dir, `out.${format}`);
  const rssBefore = rss();
  let peak = rssBefore;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss());
  }, 20);
  const t0 = performance.now();
  const description = await alignToFile(reader, OPTIONS, out, format);
  const ms = performance.now() - t0;
  clearInterval(sampler);
  await reader.close();
  return {
    ms,
    rows: description.rows,
    frames: description.framesRead,
    columns: description.columns.length,
    outBytes: statSync(out).size,
    rssGrowthMiB: (peak - rssBefore) / (1024 * 1024),
  };
}

async function runDecode() {
  const reader = await BagReader.create(bag);
  const decoder = new PayloadDecoder({
    schemas: reader.getSchemas(),
    urls: reader.getInfo().urls,
    alwaysEmitImplicit: true,
  });
  const t0 = performance.now();
  let frames = 0;
  let failed = 0;
  for await (const frame of reader.frames({ filterUrls: ['/camera/front', '/state', '/action'] })) {
    if (decoder.decode(frame).kind === 'hex') failed++;
    frames++;
  }
  const ms = performance.now() - t0;
  await reader.close();
  if (failed > 0) throw new Error(`${failed} frames did not decode`);
  return { ms, frames };
}

const results = { parquet: [], csv: [], decode: [] };
for (let r = 0; r < REPEATS; r++) {
  results.decode.push(await runDecode());
  results.parquet.push(await runAlign('parquet'));
  results.csv.push(await runAlign('csv'));
}

const decodeMs = median(results.decode.map((x) => x.ms));
const decodeFramesPerS = results.decode[0].frames / (decodeMs / 1000);
const cases = ['parquet', 'csv'].map((format) => {
  const runs = results[format];
  const ms = median(runs.map((x) => x.ms));
  const framesPerS = runs[0].frames / (ms / 1000);
  return {
    format,
    rows: runs[0].rows,
    columns: runs[0].columns,
    frames: runs[0].frames,
    ms: round(ms),
    rowsPerS: round(runs[0].rows / (ms / 1000)),
    framesPerS: round(framesPerS),
    ratioToDecode: round(framesPerS / decodeFramesPerS, 3),
    outMiB: round(runs[0].outBytes / (1024 * 1024)),
    peakRssGrowthMiB: round(Math.max(...runs.map((x) => x.rssGrowthMiB)), 1),
  };
});

const out = {
  date: new Date().toISOString(),
  runtime,
  runtimeVersion,
  quick,
  smoke,
  session: {
    seconds: SECONDS,
    messages: messages.length,
    bagMiB: round(bagBytes / (1024 * 1024)),
    urls: { '/camera/front': '30 Hz', '/state': '100 Hz', '/action': '~20 Hz, variable' },
  },
  options: OPTIONS,
  contenders: {
    align: '`alignToFile` (@vlink/bag-align): read, decode (lazily: only the messages a row uses), match, write',
    decode: '`reader.frames()` of the same urls and `PayloadDecoder.decode` of every frame',
  },
  decode: { frames: results.decode[0].frames, ms: round(decodeMs), framesPerS: round(decodeFramesPerS) },
  cases,
};
for (const c of cases) {
  console.log(
    `align ${c.format}: ${c.rows} rows × ${c.columns} columns in ${c.ms} ms = ${Math.round(c.rowsPerS)} rows/s, ${Math.round(c.framesPerS)} frames/s (${c.ratioToDecode}× plain decode at ${Math.round(decodeFramesPerS)} frames/s), peak RSS +${c.peakRssGrowthMiB} MiB`,
  );
}
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `align-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
