#!/usr/bin/env node
// Reading a 2 GiB bag of 1 MiB frames (.vdb and .vcap, no compression) with BagReader, both ways a user would:
// the synchronous cursor (openCursor / next) and the async iterator (for await … frames()). Reports MB/s (10^6 bytes
// of payload per second) and the process's peak RSS (VmHWM), beside the baseline: reading the same file with `fs`
// in 1 MiB chunks. Each measurement runs in a fresh process of the same runtime, after dropping the page cache
// (`sync; echo 3 > /proc/sys/vm/drop_caches`) when this process may do so; results say whether it could.
// The bags are written once and cached in bench/tmp/read-rss-<MiB>/. Results: bench/results/read-rss-<runtime>.json.
//
//   node bench/read-rss.bench.mjs [--quick] [--reps N]     bun bench/read-rss.bench.mjs
//   deno run -A --node-modules-dir=manual bench/read-rss.bench.mjs
//   --quick: a 256 MiB bag; --smoke: a 16 MiB bag, one rep, only to check the harness works (bench/results/smoke/).
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const script = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const MiB = 1024 * 1024;
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

/** Peak resident set size of this process so far (Linux VmHWM), in bytes; undefined elsewhere. */
function peakRss() {
  try {
    const kb = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

const childAt = args.indexOf('--child');
if (childAt >= 0) {
  // Child: one method over one file; prints RESULT {…}.
  const [method, path] = [args[childAt + 1], args[childAt + 2]];
  let frames = 0;
  let bytes = 0;
  let startRss;
  let t0;
  if (method === 'fs') {
    const buffer = new Uint8Array(MiB);
    startRss = process.memoryUsage().rss;
    t0 = performance.now();
    const fd = openSync(path, 'r');
    for (let n; (n = readSync(fd, buffer, 0, MiB, null)) > 0; ) {
      bytes += n;
      frames++;
    }
    closeSync(fd);
  } else {
    const { BagReader } = await import('../packages/bag/dist/index.js');
    startRss = process.memoryUsage().rss;
    t0 = performance.now();
    const reader = await BagReader.create(path);
    if (method === 'cursor') {
      reader.openCursor();
      for (let f = reader.next(); f; f = reader.next()) {
        frames++;
        bytes += f.data.length + (f.data[f.data.length >> 1] & 0); // touch the payload
      }
      if (reader.fail()) throw reader.getLastError();
    } else {
      for await (const f of reader.frames()) {
        frames++;
        bytes += f.data.length + (f.data[f.data.length >> 1] & 0);
      }
    }
    reader.close();
  }
  const ms = performance.now() - t0;
  console.log(`RESULT ${JSON.stringify({ ms, frames, bytes, startRss, peakRss: peakRss() })}`);
  process.exit(0);
}

const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const repsAt = args.indexOf('--reps');
const REPS = repsAt >= 0 ? Number(args[repsAt + 1]) : smoke ? 1 : quick ? 2 : 3;
const SIZE_MIB = smoke ? 16 : quick ? 256 : 2048;
const FORMATS = ['vdb', 'vcap'];
const METHODS = ['fs', 'cursor', 'iterator'];
const dir = join(here, 'tmp', `read-rss-${SIZE_MIB}`);

async function ensureBag(ext) {
  const path = join(dir, `bag.${ext}`);
  if (existsSync(`${path}.done`)) return path;
  mkdirSync(dir, { recursive: true });
  const { ActionType, BagWriter, SchemaType } = await import('../packages/bag/dist/index.js');
  // Four distinct pseudo-random 1 MiB payloads: incompressible, so the file is as big as the payload.
  const payloads = Array.from({ length: 4 }, (_, k) => {
    const out = new Uint8Array(MiB);
    let x = (k + 1) * 2654435761;
    for (let i = 0; i < MiB; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      out[i] = x & 0xff;
    }
    return out;
  });
  const t0 = performance.now();
  const writer = await BagWriter.create(path, { syncMode: true, compress: 'none', startTimestamp: 1_773_712_800_123 });
  for (let i = 0; i < SIZE_MIB; i++) {
    writer.push({
      timestamp: 1000 + i * 10_000,
      url: 'shm://camera',
      data: payloads[i % 4],
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  writeFileSync(`${path}.done`, '');
  console.log(`wrote ${path} (${SIZE_MIB} × 1 MiB, ${round((performance.now() - t0) / 1000)} s)`);
  return path;
}

/** Flushes dirty pages and drops the page cache; returns why not when this process may not. */
function dropCaches() {
  spawnSync('sync');
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '3');
    return undefined;
  } catch (error) {
    return `${error.code ?? error.message}`;
  }
}

function measureInChild(method, path) {
  const runtimeArgs = runtime === 'deno' ? ['run', '-A', '--node-modules-dir=manual'] : [];
  const child = spawnSync(process.execPath, [...runtimeArgs, script, '--child', method, path], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const last = child.stdout.trimEnd().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !last.startsWith('RESULT '))
    throw new Error(`${method} over ${path} failed (exit ${child.status}): ${child.stdout}`);
  return JSON.parse(last.slice(7));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const paths = {};
for (const ext of FORMATS) paths[ext] = await ensureBag(ext);
const loadAverageAtStart = loadavg().map((x) => round(x, 2));
let dropCachesRefused;
const runs = {};
for (let rep = 0; rep < REPS; rep++) {
  for (const ext of FORMATS) {
    // Rotate the order, so no method always follows the same one.
    const order = METHODS.map((_, i) => METHODS[(i + rep) % METHODS.length]);
    for (const method of order) {
      const refused = dropCaches();
      if (refused) dropCachesRefused = refused;
      (runs[`${ext}/${method}`] ??= []).push(measureInChild(method, paths[ext]));
    }
  }
}

const results = [];
for (const ext of FORMATS) {
  const fileBytes = statSync(paths[ext]).size;
  for (const method of METHODS) {
    const list = runs[`${ext}/${method}`];
    const expectFrames = method === 'fs' ? Math.ceil(fileBytes / MiB) : SIZE_MIB;
    if (list.some((x) => x.frames !== expectFrames))
      throw new Error(`${ext}/${method}: read ${list.map((x) => x.frames)} frames, expected ${expectFrames}`);
    const ms = median(list.map((x) => x.ms));
    const row = {
      format: ext,
      method,
      fileMiB: round(fileBytes / MiB),
      bytes: list[0].bytes,
      medianMs: round(ms),
      MBps: round(list[0].bytes / 1e6 / (ms / 1000)),
      peakRssMiB: list[0].peakRss === undefined ? null : round(median(list.map((x) => x.peakRss)) / MiB),
      startRssMiB: round(median(list.map((x) => x.startRss)) / MiB),
      runsMs: list.map((x) => round(x.ms)),
    };
    results.push(row);
    console.log(
      `${ext.padEnd(4)} ${method.padEnd(8)} ${String(row.MBps).padStart(7)} MB/s  peak RSS ${row.peakRssMiB} MiB (at start ${row.startRssMiB} MiB)`,
    );
  }
}

const out = {
  bench: 'read-rss',
  runtime,
  runtimeVersion: runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node,
  date: new Date().toISOString(),
  quick,
  reps: REPS,
  bagMiB: SIZE_MIB,
  coldCache: dropCachesRefused === undefined,
  dropCaches:
    dropCachesRefused === undefined
      ? 'dropped before every measurement'
      : `not permitted (${dropCachesRefused}): reads may hit the page cache`,
  loadAverageAtStart,
  note: 'MBps: payload bytes (fs: file bytes) / median wall time; peakRssMiB: VmHWM of the measuring process (median over reps), startRssMiB: RSS after imports, before reading',
  results,
};
if (dropCachesRefused) console.log(`page cache NOT dropped: ${dropCachesRefused}`);
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `read-rss-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
console.log(`wrote ${join(resultsDir, `read-rss-${runtime}.json`)}`);
