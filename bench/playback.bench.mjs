#!/usr/bin/env node
// Playback timing and throughput of BagReader (format reference §7.3 pacing), results to bench/results/playback-<runtime>.json.
//
//   node bench/playback.bench.mjs [--quick] [--seconds N]      bun bench/playback.bench.mjs      (build core first)
//   --smoke: a 1 s bag and a short throughput pass, only to check the harness works; results to bench/results/smoke/.
//
// 1. Paced: a robot-like mix (imu 200 Hz × 64 B, camera 30 Hz × 4 KiB, lidar 10 Hz × 16 KiB) played at rate 1 for N
//    seconds (30 by default, 3 with --quick). Emission error = when the output callback ran − when the frame was due
//    (ready callback + timestamp / rate); drift = median error over the last second − median over the first
//    (medians, so one preempted frame on a busy machine does not read as drift).
//    CPU = process.cpuUsage() over the playback / wall time: the waits must not spin a core.
// 2. Throughput: `forceDelay: 0` playback versus a plain cursor loop over the same bag, interleaved, medians.
//
// The bag is `.vdb` through @vlink/bag when packages/bag/dist exists (else through @vlink/bag-sqlite's dist when
// that exists), otherwise core's `.memjson` test backend.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { payload } from './lib/payload.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const secondsArg = args.indexOf('--seconds');
const SECONDS = secondsArg >= 0 ? Number(args[secondsArg + 1]) : smoke ? 1 : quick ? 3 : 30;
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';

const core = await import('../packages/core/dist/index.js');
const { ActionType, BagReader, BagWriter, SchemaType, registerBackend } = core;
let extension = '.memjson';
let backendName = 'memory (.memjson)';
if (existsSync(join(here, '../packages/bag/dist/index.js'))) {
  await import('../packages/bag/dist/index.js');
  [extension, backendName] = ['.vdb', '@vlink/bag (.vdb)'];
} else if (existsSync(join(here, '../packages/backend-sqlite/dist/index.js'))) {
  registerBackend((await import('../packages/backend-sqlite/dist/index.js')).sqliteBackend);
  [extension, backendName] = ['.vdb', '@vlink/bag-sqlite (.vdb)'];
} else {
  registerBackend((await import('../packages/core/dist/testing/index.js')).memoryBackend);
}

const STREAMS = [
  { url: 'dds://imu', hz: 200, size: 64 },
  { url: 'dds://camera/front', hz: 30, size: 4096 },
  { url: 'shm://lidar', hz: 10, size: 16384 },
];

async function makeBag(path, seconds) {
  const frames = [];
  for (const [s, { url, hz, size }] of STREAMS.entries()) {
    const data = payload(size, s + 1);
    // Offsets keep the streams from all landing on the same microsecond.
    for (let i = 0; i < seconds * hz; i++) frames.push({ timestamp: Math.round(i * (1e6 / hz)) + s * 137, url, data });
  }
  frames.sort((a, b) => a.timestamp - b.timestamp);
  const writer = await BagWriter.create(path, { syncMode: true });
  for (const f of frames)
    writer.push({ ...f, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish });
  await writer.close();
  return frames.length;
}

const quantile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (v, d = 3) => Math.round(v * 10 ** d) / 10 ** d;
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function paced(path) {
  const reader = await BagReader.create(path);
  let readyAt = 0;
  const errors = [];
  const dueAt = [];
  reader.registerReadyCallback(() => (readyAt = performance.now()));
  reader.registerOutputCallback((frame) => {
    const now = performance.now();
    const due = frame.timestamp / 1000;
    errors.push(now - readyAt - due);
    dueAt.push(due);
  });
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  await reader.play({ rate: 1 }).finished;
  const wall = performance.now() - wall0;
  const cpu = cpuMs() - cpu0;
  reader.close();
  const sorted = [...errors].sort((a, b) => a - b);
  const lastDue = dueAt.at(-1);
  const first = errors.filter((_, i) => dueAt[i] < 1000);
  const last = errors.filter((_, i) => dueAt[i] > lastDue - 1000);
  return {
    frames: errors.length,
    wallMs: round(wall, 1),
    errorMs: {
      min: round(sorted[0]),
      p50: round(quantile(sorted, 0.5)),
      p99: round(quantile(sorted, 0.99)),
      max: round(sorted.at(-1)),
    },
    driftMs: round(median(last) - median(first)),
    cpuPercent: round((cpu / wall) * 100, 1),
  };
}

function cursorPass(reader) {
  reader.openCursor();
  let n = 0;
  let bytes = 0;
  for (let f = reader.next(); f; f = reader.next()) {
    n++;
    bytes += f.data.length;
  }
  // The byte count is folded in (as 0) so the loop reads every frame's data, as a real consumer would.
  return n + (bytes & 0);
}

async function throughput(path, passes) {
  const reader = await BagReader.create(path);
  const cursorRates = [];
  const playRates = [];
  for (let rep = 0; rep < 5; rep++) {
    const runCursor = () => {
      const t0 = performance.now();
      let n = 0;
      for (let p = 0; p < passes; p++) n += cursorPass(reader);
      cursorRates.push(n / ((performance.now() - t0) / 1000));
    };
    const runPlay = async () => {
      let n = 0;
      reader.registerOutputCallback((f) => {
        // Reading the length touches each frame's data view, as a real consumer would.
        if (f.data.length >= 0) n++;
      });
      const t0 = performance.now();
      await reader.play({ forceDelay: 0, times: passes }).finished;
      playRates.push(n / ((performance.now() - t0) / 1000));
    };
    if (rep % 2 === 0) {
      runCursor();
      await runPlay();
    } else {
      await runPlay();
      runCursor();
    }
  }
  reader.close();
  const cursor = median(cursorRates);
  const play = median(playRates);
  return {
    passes,
    cursorFramesPerS: Math.round(cursor),
    playbackFramesPerS: Math.round(play),
    ratio: round(play / cursor),
  };
}

/** Timing depends on the machine's load and on scheduling (`chrt -f 10 node …` runs it real-time): record both. */
function scheduling() {
  let policy = 'unknown';
  try {
    // /proc/self/stat field 41 is the scheduling policy (0 normal, 1 FIFO, 2 RR); the name may contain spaces.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    policy =
      ['SCHED_OTHER', 'SCHED_FIFO', 'SCHED_RR', 'SCHED_BATCH', 'SCHED_ISO', 'SCHED_IDLE'][Number(fields[41 - 3])] ??
      'unknown';
  } catch {
    // Not Linux: leave it unknown.
  }
  return { policy, loadAvg1m: round(loadavg()[0], 2) };
}

const dir = mkdtempSync(join(tmpdir(), 'vlink-playback-bench-'));
try {
  const path = join(dir, `paced${extension}`);
  const frames = await makeBag(path, SECONDS);
  const sched = scheduling();
  console.log(
    `${runtime}: ${backendName}, ${frames} frames over ${SECONDS} s (${STREAMS.map((s) => `${s.hz} Hz`).join(' + ')}); ${sched.policy}, load ${sched.loadAvg1m}`,
  );
  const pacing = await paced(path);
  console.log(
    `paced rate 1: error p50 ${pacing.errorMs.p50} ms, p99 ${pacing.errorMs.p99} ms, max ${pacing.errorMs.max} ms, ` +
      `min ${pacing.errorMs.min} ms; drift ${pacing.driftMs} ms; CPU ${pacing.cpuPercent} % of one core`,
  );
  const passes = Math.max(1, Math.ceil((smoke ? 1_000 : quick ? 20_000 : 60_000) / frames));
  const speed = await throughput(path, passes);
  console.log(
    `forceDelay 0: ${speed.playbackFramesPerS} frames/s vs cursor ${speed.cursorFramesPerS} frames/s (ratio ${speed.ratio})`,
  );
  const result = {
    runtime,
    version: runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.version,
    date: new Date().toISOString(),
    quick,
    backend: backendName,
    scheduling: sched,
    streams: STREAMS,
    seconds: SECONDS,
    frames,
    pacing,
    throughput: speed,
    goals: {
      errorP99LeqOneMs: pacing.errorMs.p99 <= 1,
      driftLeqTwoMs: Math.abs(pacing.driftMs) <= 2,
      throughputGeq80Percent: speed.ratio >= 0.8,
    },
  };
  const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, `playback-${runtime}.json`), `${JSON.stringify(result, null, 2)}\n`);
  console.log(`goals: ${JSON.stringify(result.goals)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
