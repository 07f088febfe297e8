#!/usr/bin/env node
// Reading a .vcap on S3 by range requests against a plain GET of the whole object (what reading without ranges
// costs), through @vlink/bag-s3 against an S3 server on loopback: bytes transferred and time of
//   summary  BagReader.create('s3://…') + getInfo()
//   window   the frames of one second in the middle of the recording
//   one url  every frame of the smallest url (interleaved with the others in every chunk)
//   full     every frame of the bag (the goal: ≥ 70 % of a plain GET's throughput)
// each against a GET of the whole object timed in the same repetition, and against the same number of ranges of the
// same size fetched bare (what the server alone costs for them). The server (bench/lib/s3-server.mjs): gofakes3
// (bench/s3-server, built with Go) by default, `--server moto` for moto's, which reads the whole object for every
// range, so on it a full read by ranges is bound by moto, not by the reader. Without a server the script says so and
// exits 0 without a result. Not in run.mjs: the bench smoke stage has no S3 server. The bag (4 KiB frames on 4 urls
// plus a 64-byte /pose, 100 µs apart) is written once and cached in bench/tmp/s3-read-<MiB>/.
// Results: bench/results/s3-read-<runtime>.json (smoke: results/smoke/).
//
//   node bench/s3-read.bench.mjs [--quick | --smoke] [--server gofakes3|moto]     bun bench/s3-read.bench.mjs
//   deno run -A --node-modules-dir=manual bench/s3-read.bench.mjs
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchS3Server } from './lib/s3-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const MIB = smoke ? 8 : quick ? 32 : 256;
const REPS = smoke ? 1 : 3;
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const { ActionType, BagReader, BagWriter, SchemaType, registerByteSourceScheme } = await import(
  '../packages/bag/dist/index.js'
);
const { S3ByteSource, S3Client, parseS3Url } = await import('../packages/storage-s3/dist/index.js');

async function ensureBag() {
  const dir = join(here, 'tmp', `s3-read-${MIB}`);
  const path = join(dir, 'bag.vcap');
  if (existsSync(`${path}.done`)) return path;
  mkdirSync(dir, { recursive: true });
  // Payloads that do not compress away (a multiplicative hash), so the object's size is what was recorded.
  const payloads = Array.from({ length: 16 }, (_, i) =>
    Uint8Array.from({ length: 4096 }, (_, j) => ((i * 2_654_435_761 + j * 40_503) >>> 13) & 0xff),
  );
  const pose = new Uint8Array(64).fill(7);
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: 1_773_712_800_123 });
  const messages = Math.floor((MIB * 2 ** 20) / 4096);
  for (let i = 0; i < messages; i++) {
    const frame = {
      timestamp: 1000 + i * 100,
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    };
    writer.push({ ...frame, url: `dds://lidar/${i % 4}`, data: payloads[i % 16] });
    if (i % 10 === 0) writer.push({ ...frame, url: '/pose', data: pose });
  }
  await writer.close();
  writeFileSync(`${path}.done`, '');
  return path;
}

/** Opens, runs `use`, closes; the time and what the byte source fetched. */
async function measure(url, use, sources) {
  sources.length = 0;
  const t0 = performance.now();
  const reader = await BagReader.create(url);
  let frames = 0;
  try {
    frames = await use(reader);
  } finally {
    reader.close();
  }
  const ms = performance.now() - t0;
  return {
    ms,
    frames,
    requests: sources.reduce((s, x) => s + x.stats.requests, 0),
    bytes: sources.reduce((s, x) => s + x.stats.bytes, 0),
  };
}

async function count(reader, config) {
  let n = 0;
  for await (const _ of reader.frames(config)) n++;
  return n;
}

const started = await startBenchS3Server(args);
if (typeof started === 'string') {
  console.log(`s3-read: skipped: ${started}`);
  process.exit(0);
}
const server = started;
try {
  const path = await ensureBag();
  const fileBytes = statSync(path).size;
  const options = { endpoint: server.endpoint, accessKeyId: 'test', secretAccessKey: 'test', region: 'us-east-1' };
  const client = new S3Client(options);
  await client.createBucket('bench');
  const url = 's3://bench/read.vcap';
  await client.put(parseS3Url(url), readFileSync(path));
  const sources = [];
  registerByteSourceScheme('s3', async (u) => {
    const source = await S3ByteSource.open(u, options);
    sources.push(source);
    return source;
  });
  const local = await BagReader.create(path);
  const info = local.getInfo();
  const poseCount = info.urls.find((u) => u.url === '/pose').count;
  local.close();
  const midMs = Math.floor(info.totalDuration / 2);
  const cases = {
    summary: async (r) => (r.getInfo().messageCount === info.messageCount ? 0 : Number.NaN),
    window: (r) => count(r, { beginTime: midMs, endTime: midMs + 1000 }),
    oneUrl: (r) => count(r, { filterUrls: ['/pose'] }),
    full: (r) => count(r),
  };
  const rows = {};
  for (const [name, use] of Object.entries(cases)) {
    const runs = [];
    for (let rep = 0; rep < REPS; rep++) {
      const range = await measure(url, use, sources);
      // The same number of ranges of the same size fetched bare (no reader): what the server alone costs for them.
      // On moto, which reads the whole object for every range, this floor grows with the object's size.
      const bare = new S3Client(options);
      const piece = Math.max(1, Math.floor(range.bytes / Math.max(1, range.requests)));
      const t0 = performance.now();
      for (let i = 0; i < range.requests; i++) {
        const offset = Math.floor((i * (fileBytes - piece)) / Math.max(1, range.requests));
        await bare.getRange(parseS3Url(url), offset, piece);
      }
      const bareMs = performance.now() - t0;
      const t1 = performance.now();
      const whole = await new S3Client(options).getRange(parseS3Url(url), 0, fileBytes);
      const getMs = performance.now() - t1;
      if (whole.bytes.length !== fileBytes) throw new Error('the plain GET did not return the whole object');
      runs.push({ ...range, getMs, bareMs });
    }
    const frames = runs[0].frames;
    if (name === 'oneUrl' && frames !== poseCount) throw new Error(`one url read ${frames} of ${poseCount} frames`);
    if (name === 'full' && frames !== info.messageCount) throw new Error(`full read ${frames} of ${info.messageCount}`);
    const ms = median(runs.map((r) => r.ms));
    const getMs = median(runs.map((r) => r.getMs));
    const bareMs = median(runs.map((r) => r.bareMs));
    rows[name] = {
      frames,
      requests: Math.max(...runs.map((r) => r.requests)),
      bytes: Math.max(...runs.map((r) => r.bytes)),
      ms: round(ms),
      fullGetMs: round(getMs),
      bareRangesMs: round(bareMs),
      bytesRatio: round(Math.max(...runs.map((r) => r.bytes)) / fileBytes, 4),
      timeRatio: round(ms / getMs, 3),
      // What the reader adds over fetching its ranges bare (1 = nothing).
      overBareRanges: round(ms / Math.max(1, bareMs), 3),
    };
  }
  const result = {
    benchmark: 's3-read',
    runtime,
    server: server.name,
    mode: smoke ? 'smoke' : quick ? 'quick' : 'full',
    fileBytes,
    messages: info.messageCount,
    cases: rows,
    // A full read by range requests delivers the object at this fraction of a plain GET's rate (goal ≥ 0.7).
    fullReadThroughputRatio: round(rows.full.fullGetMs / rows.full.ms, 3),
    goals: { fullReadThroughputRatioMin: 0.7 },
  };
  result.met = result.fullReadThroughputRatio >= 0.7;
  console.log(
    `s3-read ${runtime} on ${server.name}: ${round(fileBytes / 2 ** 20, 1)} MiB .vcap, ${info.messageCount} messages`,
  );
  for (const [name, r] of Object.entries(rows)) {
    console.log(
      `  ${name.padEnd(8)} ${String(r.requests).padStart(4)} requests ${round(r.bytes / 2 ** 20, 3)} MiB ` +
        `(${round(r.bytesRatio * 100, 2)} % of the object) in ${r.ms} ms; a plain GET: ${r.fullGetMs} ms (time ×${r.timeRatio}); ` +
        `the same ranges fetched bare: ${r.bareRangesMs} ms (×${r.overBareRanges})`,
    );
  }
  console.log(
    `  full read at ${result.fullReadThroughputRatio} of a plain GET's throughput (goal ≥ 0.7: ${result.met ? 'met' : 'MISSED'})`,
  );
  const out = join(here, 'results', ...(smoke ? ['smoke'] : []));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `s3-read-${runtime}.json`), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  server.stop();
}
