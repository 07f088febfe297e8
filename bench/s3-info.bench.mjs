#!/usr/bin/env node
// `info` of a large .vcap on S3: BagReader.create('s3://…') + getInfo() through @vlink/bag-s3 against moto's S3
// server on loopback, counting the range requests and the bytes they carried (goal: ≤ 3 requests, ≤ 1 MiB), next to
// a plain GET of the whole object (what reading without ranges would cost). Needs moto_server (see
// packages/storage-s3/README.md); without it the script says so and exits 0 without a result.
// The bag (4 KiB frames over 5 urls, default writer options) is written once and cached in bench/tmp/s3-info-<MiB>/.
// Results: bench/results/s3-info-<runtime>.json (smoke: bench/results/smoke/).
//
//   node bench/s3-info.bench.mjs [--quick | --smoke]     bun bench/s3-info.bench.mjs
//   deno run -A --node-modules-dir=manual bench/s3-info.bench.mjs
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MotoServer } from '@vlink/fixtures/s3';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const MIB = smoke ? 8 : quick ? 128 : 1024;
const REPS = smoke ? 2 : 5;
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const { ActionType, BagReader, BagWriter, SchemaType, registerByteSourceScheme } = await import(
  '../packages/bag/dist/index.js'
);
const { S3ByteSource, S3Client, parseS3Url } = await import('../packages/storage-s3/dist/index.js');

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

const started = await MotoServer.start();
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
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const result = {
    benchmark: 's3-info',
    runtime,
    mode: smoke ? 'smoke' : quick ? 'quick' : 'full',
    fileBytes,
    messages: expected.messageCount,
    requests: Math.max(...runs.map((r) => r.requests)),
    bytes: Math.max(...runs.map((r) => r.bytes)),
    infoMs: round(median(runs.map((r) => r.ms))),
    fullGetMs: round(median(runs.map((r) => r.fullGetMs))),
    goals: { requestsMax: 3, bytesMax: 2 ** 20 },
  };
  result.met = result.requests <= 3 && result.bytes <= 2 ** 20;
  console.log(
    `s3-info ${runtime}: ${round(fileBytes / 2 ** 20, 1)} MiB .vcap, ${result.messages} messages: info in ${result.requests} requests, ` +
      `${round(result.bytes / 1024, 1)} KiB, ${result.infoMs} ms (a plain GET of the object: ${result.fullGetMs} ms); goal ≤ 3 requests and ≤ 1 MiB: ${result.met ? 'met' : 'MISSED'}`,
  );
  const out = join(here, 'results', ...(smoke ? ['smoke'] : []));
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `s3-info-${runtime}.json`), `${JSON.stringify(result, null, 2)}\n`);
  if (!result.met) process.exitCode = 1;
} finally {
  server.stop();
}
