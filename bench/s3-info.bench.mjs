#!/usr/bin/env node
// `info` of a large .vcap on S3: BagReader.create('s3://…') + getInfo() through @vlink/bag-s3 against an S3 server
// on loopback (bench/lib/s3-server.mjs: gofakes3 built with Go by default, `--server moto` for moto's), counting the
// range requests and the bytes they carried (goal: ≤ 3 requests, ≤ 1 MiB), next to a plain GET of the whole object
// (what reading without ranges would cost). Without a server the script says so and exits 0 without a result.
// The bag (4 KiB frames over 5 urls, default writer options) is written once and cached in bench/tmp/s3-info-<MiB>/.
// Then the same for split recordings (.vcapx, .vdbx of 20 segments, 256 MiB; 64 MiB --quick): `info` and a window of
// one second (one segment) with the manifest's segment facts (VLinkBagSegments), next to `info` of the same recording
// with a manifest without them (as VLink and older versions wrote it: every segment opened). Requests and bytes of
// every source opened and of the folder listing are counted (goal: info opens no segment, the window one or two).
// Results: bench/results/s3-info-<runtime>.json (smoke: bench/results/smoke/).
//
//   node bench/s3-info.bench.mjs [--quick | --smoke] [--server gofakes3|moto]     bun bench/s3-info.bench.mjs
//   deno run -A --node-modules-dir=manual bench/s3-info.bench.mjs
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchS3Server } from './lib/s3-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const MIB = smoke ? 8 : quick ? 128 : 1024;
const REPS = smoke ? 2 : 5;
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const { ActionType, BagReader, BagWriter, SchemaType, registerByteSourceScheme, registerUrlScheme } = await import(
  '../packages/bag/dist/index.js'
);
const { S3ByteSource, S3Client, parseS3Url, parseS3Prefix, listObjects } = await import(
  '../packages/storage-s3/dist/index.js'
);
const SPLIT_MIB = smoke ? 8 : quick ? 64 : 256;
const SEGMENTS = 20;

/** A split recording of `SEGMENTS` one-second segments, 4 KiB frames over 5 urls; cached like the .vcap. */
async function ensureSplit(ext) {
  const dir = join(here, 'tmp', `s3-info-split-${SPLIT_MIB}${ext.replace('.', '-')}`);
  const path = join(dir, `drive${ext}`);
  if (existsSync(join(dir, 'done'))) return { dir, path };
  mkdirSync(dir, { recursive: true });
  const payloads = Array.from({ length: 16 }, (_, i) =>
    Uint8Array.from({ length: 4096 }, (_, j) => (i * 31 + j * 7) & 0xff),
  );
  const writer = await BagWriter.create(path, {
    syncMode: true,
    startTimestamp: 1_773_712_800_123,
    splitByTime: 1000,
    summary: false,
  });
  const messages = Math.floor((SPLIT_MIB * 2 ** 20) / 4096);
  const stepUs = (SEGMENTS * 1e6) / messages;
  for (let i = 0; i < messages; i++) {
    writer.push({
      timestamp: Math.floor(1000 + i * stepUs),
      url: `dds://topic/${i % 5}`,
      data: payloads[i % 16],
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  writeFileSync(join(dir, 'done'), '');
  return { dir, path };
}

/** What a source fetched: its own ranged GETs, and those of an asynchronous local copy after it was opened. */
function sourceStats(s) {
  const after = s.object.client.stats;
  const from = s.copyFrom ?? after;
  return {
    requests: s.stats.requests + after.requests - from.requests,
    bytes: s.stats.bytes + after.bytes - from.bytes,
  };
}

/** `info`, a one-second window and `info` without segment facts of a split recording on S3: requests and bytes. */
async function splitFigures(ext, options, client) {
  const { dir, path } = await ensureSplit(ext);
  const names = readdirSync(dir).filter((n) => n !== 'done');
  let totalBytes = 0;
  const folder = `split${ext.replace('.', '-')}`;
  for (const name of names) {
    const bytes = readFileSync(join(dir, name));
    totalBytes += bytes.length;
    await client.put({ bucket: 'bench', key: `${folder}/${name}` }, bytes);
  }
  const manifest = JSON.parse(readFileSync(path, 'utf8'));
  const { VLinkBagSegments: _, ...old } = manifest;
  await client.put({ bucket: 'bench', key: `${folder}/old${ext}` }, new TextEncoder().encode(JSON.stringify(old)));
  const sources = [];
  const lister = new S3Client(options);
  let measured = 0;
  const measure = async (run) => {
    sources.length = 0;
    // A cache of its own for each measurement: what it copies is counted, none is found from before.
    const cacheDir = join(options.cacheDir, `${process.pid}-${++measured}`);
    rmSync(cacheDir, { recursive: true, force: true });
    const measuredOptions = { ...options, cacheDir };
    registerUrlScheme('s3', {
      open: async (u) => {
        const s = await S3ByteSource.open(u, measuredOptions);
        // A source opened this way makes its local copy through its object's client: counted from here on.
        s.copyFrom = { ...s.object.client.stats };
        sources.push(s);
        return s;
      },
      openSync: (u) => {
        const s = S3ByteSource.openSync(u, measuredOptions);
        sources.push(s);
        return s;
      },
      async list(prefix) {
        const { bucket, key } = parseS3Prefix(prefix);
        return (await listObjects(lister, bucket, key)).map((o) => ({
          url: `s3://${bucket}/${o.key}`,
          size: o.size,
          mtimeMs: o.mtimeMs,
        }));
      },
    });

    const before = { ...lister.stats };
    const t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    rmSync(cacheDir, { recursive: true, force: true });
    const segments = sources.filter((s) => !s.name.endsWith(ext)).length;
    return {
      ms: round(ms),
      segmentsOpened: segments,
      requests: sources.reduce((n, s) => n + sourceStats(s).requests, 0) + lister.stats.requests - before.requests,
      bytes: sources.reduce((n, s) => n + sourceStats(s).bytes, 0) + lister.stats.bytes - before.bytes,
    };
  };
  const url = `s3://bench/${folder}/drive${ext}`;
  let frames = 0;
  const info = await measure(async () => {
    const reader = await BagReader.create(url);
    reader.getInfo();
    reader.close();
  });
  const window = await measure(async () => {
    const reader = await BagReader.create(url);
    for await (const _ of reader.frames({ beginTime: 10_000, endTime: 10_999 })) frames++;
    reader.close();
  });
  const withoutFacts = await measure(async () => {
    const reader = await BagReader.create(`s3://bench/${folder}/old${ext}`);
    reader.getInfo();
    reader.close();
  });
  return { ext, segments: manifest.VLinkFiles.length, totalBytes, info, window: { ...window, frames }, withoutFacts };
}

async function ensureBag() {
  const dir = join(here, 'tmp', `s3-info-${MIB}`);
  const path = join(dir, 'bag.vcap');
  if (existsSync(`${path}.done`)) return path;
  mkdirSync(dir, { recursive: true });
  const payloads = Array.from({ length: 16 }, (_, i) =>
    Uint8Array.from({ length: 4096 }, (_, j) => (i * 31 + j * 7) & 0xff),
  );
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: 1_773_712_800_123 });
  const messages = Math.floor((MIB * 2 ** 20) / 4096);
  for (let i = 0; i < messages; i++) {
    writer.push({
      timestamp: 1000 + i * 100,
      url: `dds://topic/${i % 5}`,
      data: payloads[i % 16],
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  writeFileSync(`${path}.done`, '');
  return path;
}

const started = await startBenchS3Server(args);
if (typeof started === 'string') {
  console.log(`s3-info: skipped: ${started}`);
  process.exit(0);
}
const server = started;
try {
  const path = await ensureBag();
  const fileBytes = statSync(path).size;
  const options = { endpoint: server.endpoint, accessKeyId: 'test', secretAccessKey: 'test', region: 'us-east-1' };
  const client = new S3Client(options);
  await client.createBucket('bench');
  const url = 's3://bench/large.vcap';
  await client.put(parseS3Url(url), readFileSync(path));
  let last;
  registerByteSourceScheme('s3', async (u) => (last = await S3ByteSource.open(u, options)));
  const local = await BagReader.create(path);
  const expected = local.getInfo();
  local.close();
  const runs = [];
  for (let rep = 0; rep < REPS; rep++) {
    const t0 = performance.now();
    const reader = await BagReader.create(url);
    const info = reader.getInfo();
    const ms = performance.now() - t0;
    reader.close();
    if (info.messageCount !== expected.messageCount) throw new Error('info over S3 differs from the local info');
    const t1 = performance.now();
    const whole = new S3Client(options);
    await whole.getRange(parseS3Url(url), 0, fileBytes);
    runs.push({ ms, requests: last.stats.requests, bytes: last.stats.bytes, fullGetMs: performance.now() - t1 });
  }
  const split = [];
  for (const ext of ['.vcapx', '.vdbx'])
    split.push(await splitFigures(ext, { ...options, cacheDir: join(here, 'tmp', 's3-info-cache') }, client));
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const result = {
    benchmark: 's3-info',
    runtime,
    server: server.name,
    mode: smoke ? 'smoke' : quick ? 'quick' : 'full',
    fileBytes,
    messages: expected.messageCount,
    requests: Math.max(...runs.map((r) => r.requests)),
    bytes: Math.max(...runs.map((r) => r.bytes)),
    infoMs: round(median(runs.map((r) => r.ms))),
    fullGetMs: round(median(runs.map((r) => r.fullGetMs))),
    split,
    goals: { requestsMax: 3, bytesMax: 2 ** 20, splitInfoSegments: 0, splitWindowSegmentsMax: 2 },
  };
  result.met =
    result.requests <= 3 &&
    result.bytes <= 2 ** 20 &&
    split.every((s) => s.info.segmentsOpened === 0 && s.window.segmentsOpened <= 2);
  console.log(
    `s3-info ${runtime}: ${round(fileBytes / 2 ** 20, 1)} MiB .vcap, ${result.messages} messages: info in ${result.requests} requests, ` +
      `${round(result.bytes / 1024, 1)} KiB, ${result.infoMs} ms (a plain GET of the object: ${result.fullGetMs} ms); goal ≤ 3 requests and ≤ 1 MiB: ${result.met ? 'met' : 'MISSED'}`,
  );
  for (const s of split)
    console.log(
      `s3-info ${runtime}: ${s.ext} of ${s.segments} segments, ${round(s.totalBytes / 2 ** 20, 1)} MiB: info in ${s.info.requests} requests, ` +
        `${round(s.info.bytes / 1024, 1)} KiB, ${s.info.segmentsOpened} segments opened (without segment facts: ${s.withoutFacts.requests} requests, ` +
        `${round(s.withoutFacts.bytes / 1024, 1)} KiB, ${s.withoutFacts.segmentsOpened} segments); a 1 s window: ${s.window.frames} frames, ` +
        `${s.window.requests} requests, ${round(s.window.bytes / 1024, 1)} KiB (${round((100 * s.window.bytes) / s.totalBytes, 1)} % of the objects), ${s.window.segmentsOpened} segments opened`,
    );
  const out = join(here, 'results', ...(smoke ? ['smoke'] : []));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `s3-info-${runtime}.json`), `${JSON.stringify(result, null, 2)}\n`);
  if (!result.met) process.exitCode = 1;
} finally {
  server.stop();
}
