#!/usr/bin/env node
// Does the server stay responsive under hostile and heavy bag work (issue 21)? With the server in a child process
// (same runtime), GET /v1/health is timed every 10 ms (one keep-alive connection) while:
//   idle      nothing else runs;
//   view      4 clients keep opening a .vdb whose header is an endless recursive view (refused by the schema guard);
//   hang      2 clients keep opening bags whose backend never returns from open (a new file each time): every worker
//             gets stuck, is found stuck after its deadline and terminated (the server's deadlines are 2 s here);
//   export    two clients export a large bag as NDJSON with decode=true (JSON payloads), each in its own process.
// Each runs against the server as shipped (one bag worker per core) and, as the baseline, the same server with
// `workers: 0` (bag work on its event loop, as before issue 21); `hang` has no baseline, it would stop that server for
// good. Export throughput of one client alone and of the two together says whether readers scale with cores.
// Goal: /v1/health p99 ≤ 50 ms in view, hang and export. Results: bench/results/health-<runtime>.json.
//
//   node bench/health.bench.mjs [--quick | --smoke]       (build the packages first)
//   Bag: 2 GiB of ~1 KiB JSON messages (256 MiB with --quick, 8 MiB with --smoke), cached in bench/tmp/health-*.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ActionType, BagWriter, SchemaType } from '../packages/bag/dist/index.js';
import { loadDriver } from '../packages/backend-sqlite/dist/index.js';

const args = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';

// --export URL: the exporter child. Reads the stream to its end, counting bytes, and prints {bytes, ms}.
const exportUrl = args[args.indexOf('--export') + 1];
if (args.includes('--export')) {
  const t0 = performance.now();
  const bytes = await new Promise((resolve, reject) => {
    httpGet(exportUrl, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${exportUrl}: ${res.statusCode}`));
      let n = 0;
      res.on('data', (chunk) => (n += chunk.length));
      res.on('end', () => resolve(n));
      res.on('error', reject);
    }).on('error', reject);
  });
  process.stdout.write(`${JSON.stringify({ bytes, ms: performance.now() - t0 })}\n`);
  process.exit(0);
}

const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const MiB = 1024 * 1024;
const BAG_BYTES = smoke ? 8 * MiB : quick ? 256 * MiB : 2048 * MiB;
const PHASE_S = smoke ? 1.5 : quick ? 6 : 12;
const PROBE_EVERY_MS = 10;
const DEADLINE_MS = 2000;
const cores = typeof availableParallelism === 'function' ? availableParallelism() : cpus().length;

// ---------------------------------------------------------------------------------------------------------------
// Bags (the large one cached between runs)
const dir = join(here, 'tmp', `health-${BAG_BYTES / MiB}MiB`);
mkdirSync(dir, { recursive: true });

/** ~1 KiB JSON messages: a pose, 60 ranges and a label, as a robot's status topic might carry. */
function message(i) {
  const ranges = Array.from({ length: 60 }, (_, k) => Math.round(((i * 7 + k * 13) % 1000) * 1.37) / 100);
  return new TextEncoder().encode(
    JSON.stringify({
      seq: i,
      stamp: { sec: Math.floor(i / 100), nsec: (i % 100) * 10_000_000 },
      pose: { x: (i % 5000) / 10, y: -(i % 3000) / 7, z: 0.25, yaw: (i % 628) / 100 },
      ranges,
      label: `scan-${i % 97}`,
      ok: i % 11 !== 0,
    }),
  );
}

const bag = join(dir, 'export.vdb');
if (!existsSync(`${bag}.done`)) {
  console.log(`writing a ${BAG_BYTES / MiB} MiB bag of JSON messages in ${dir} …`);
  rmSync(bag, { force: true });
  const writer = await BagWriter.create(bag, { syncMode: true, startTimestamp: 1_773_712_800_123 });
  let bytes = 0;
  for (let i = 0; bytes < BAG_BYTES; i++) {
    const data = message(i);
    bytes += data.length;
    writer.push({
      timestamp: 1000 + i * 1000,
      url: `json/status${i % 4}`,
      data,
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  writeFileSync(`${bag}.done`, '');
}
const view = join(dir, 'hostile-view.vdb');
if (!existsSync(view)) {
  const writer = await BagWriter.create(view, { syncMode: true });
  writer.push({
    timestamp: 1000,
    url: 'a',
    data: new Uint8Array(8),
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  });
  await writer.close();
  const db = (await loadDriver()).open(view);
  db.exec(`ALTER TABLE VLinkHeader RENAME TO H0;
    CREATE VIEW VLinkHeader AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
      SELECT H0.* FROM H0, r WHERE r.n < 0;`);
  db.close();
}
const hangDir = join(dir, 'hang');
rmSync(hangDir, { recursive: true, force: true });
mkdirSync(hangDir);

// ---------------------------------------------------------------------------------------------------------------
// Processes
const children = [];
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});
const runtimeArgs = runtime === 'deno' ? ['run', '-A'] : [];

function startServer(workers) {
  const child = spawn(
    process.execPath,
    [
      ...runtimeArgs,
      join(here, 'http-server.mjs'),
      '--root',
      dir,
      '--workers',
      String(workers),
      '--deadline',
      String(DEADLINE_MS),
      '--hang',
      '--quiet',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.on('exit', (code) => reject(new Error(`server exited (${code})`)));
    child.stdout.on('data', (data) => {
      buffered += data.toString();
      const nl = buffered.indexOf('\n');
      if (nl < 0) return;
      const { port } = JSON.parse(buffered.slice(0, nl));
      resolve({ base: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGKILL') });
    });
  });
}

function exporter(url) {
  const child = spawn(process.execPath, [...runtimeArgs, fileURLToPath(import.meta.url), '--export', url], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`exporter exited ${code}`))));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Measuring
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function timedGet(url, options = {}) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = httpGet(url, options, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - t0, status: res.statusCode }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Probes /v1/health every PROBE_EVERY_MS until `until` settles; returns the latencies (ms). */
async function probe(base, until) {
  const latencies = [];
  let done = false;
  until.finally(() => (done = true));
  while (!done) {
    const started = performance.now();
    const { ms, status } = await timedGet(`${base}/v1/health`, { agent });
    if (status !== 200) throw new Error(`health answered ${status}`);
    latencies.push(ms);
    const wait = PROBE_EVERY_MS - (performance.now() - started);
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
  await until;
  return latencies;
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  const r = (x) => Math.round(x * 100) / 100;
  return { n: s.length, p50: r(at(0.5)), p99: r(at(0.99)), max: r(s[s.length - 1]) };
}

const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));

/** `clients` loops each requesting `path()` until the phase ends; counts answers by status. */
async function hammer(base, clients, path, seconds) {
  const end = performance.now() + seconds * 1000;
  const statuses = {};
  await Promise.all(
    Array.from({ length: clients }, async () => {
      const own = new Agent({ keepAlive: true, maxSockets: 1 });
      while (performance.now() < end) {
        const { status } = await timedGet(`${base}${path()}`, { agent: own });
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
      own.destroy();
    }),
  );
  return statuses;
}

async function exportRun(base, clients) {
  const url = `${base}/v1/bags/export.vdb/messages?format=ndjson&decode=true`;
  const t0 = performance.now();
  const runs = Promise.all(Array.from({ length: clients }, () => exporter(url)));
  const latencies = await probe(base, runs);
  const results = await runs;
  const seconds = (performance.now() - t0) / 1000;
  const bytes = results.reduce((n, r) => n + r.bytes, 0);
  return {
    clients,
    health: stats(latencies),
    ndjsonBytes: bytes,
    aggregateMBPerS: Math.round((bytes / 1e6 / seconds) * 10) / 10,
    perClientMBPerS: results.map((r) => Math.round((r.bytes / 1e6 / (r.ms / 1000)) * 10) / 10),
  };
}

async function measure(workers) {
  const server = await startServer(workers);
  const out = { workers };
  try {
    // Warm up: workers started, the bag's reader and decoder built.
    await timedGet(`${server.base}/v1/bags/export.vdb/info`);
    await timedGet(`${server.base}/v1/bags/export.vdb/messages?limit=10&decode=true`);
    out.idle = stats(await probe(server.base, sleep(PHASE_S)));
    console.log(`  workers ${workers}: idle health ${JSON.stringify(out.idle)}`);
    const viewRun = hammer(server.base, 4, () => '/v1/bags/hostile-view.vdb/info', PHASE_S);
    out.view = { health: stats(await probe(server.base, viewRun)), answers: await viewRun };
    console.log(`  workers ${workers}: hostile view ${JSON.stringify(out.view)}`);
    out.exportOne = await exportRun(server.base, 1);
    console.log(`  workers ${workers}: one exporter ${JSON.stringify(out.exportOne)}`);
    out.exportTwo = await exportRun(server.base, 2);
    console.log(`  workers ${workers}: two exporters ${JSON.stringify(out.exportTwo)}`);
    // The stuck workers last: on Deno (2.9) `terminate()` does not stop a worker spinning in JavaScript (an open
    // Deno bug, see the pull request denoland/deno#35657), so every stuck worker it replaced kept a core busy for
    // the rest of the run, and an export measured after this phase measured two spinning threads beside it (Deno's
    // export ran at 14.7 MB/s, at 38 alone).
    if (workers > 0) {
      let k = 0;
      const hangRun = hammer(
        server.base,
        2,
        () => {
          const name = `stuck-${k++}.hang`;
          writeFileSync(join(hangDir, name), 'never opens');
          return `/v1/bags/hang%2F${name}/info`;
        },
        PHASE_S,
      );
      out.hang = { health: stats(await probe(server.base, hangRun)), answers: await hangRun };
      console.log(`  workers ${workers}: hanging opens ${JSON.stringify(out.hang)}`);
    }
  } finally {
    server.stop();
  }
  return out;
}

const load = { start: loadavg() };
console.log(`health under load on ${runtime}, ${cores} cores, bag ${BAG_BYTES / MiB} MiB`);
const pool = await measure(Math.min(8, cores));
const baseline = await measure(0);
load.end = loadavg();

const result = {
  date: new Date().toISOString(),
  runtime,
  quick,
  smoke,
  cores,
  bagMiB: BAG_BYTES / MiB,
  phaseSeconds: PHASE_S,
  probeEveryMs: PROBE_EVERY_MS,
  deadlineMs: DEADLINE_MS,
  pool,
  baseline,
  load,
};
const resultsDir = join(here, 'results', ...(smoke ? ['smoke'] : []));
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `health-${runtime}.json`), `${JSON.stringify(result, null, 2)}\n`);
console.log(`wrote ${join(resultsDir, `health-${runtime}.json`)}`);
process.exit(0);
