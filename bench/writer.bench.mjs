#!/usr/bin/env node
// Producer cost and event-loop health of the async (worker) BagWriter against syncMode.
// Usage: node bench/writer.bench.mjs [--quick[=section,…]] [--rt=pushCost,loopDelay]    (bun likewise)
// --quick shortens every section, --quick=throughput only the named ones.
// --rt runs the named sections under `chrt -f 10` (Linux, root): on a shared machine that measures the writer rather
// than the scheduler's queue. Those two sections are paced and need little CPU; the JSON records which ran so.
// --smoke: a fraction of a second per section, only to check the harness works; results go to bench/results/smoke/.
// Writes bench/results/writer-<runtime>.json. Sections: push cost per frame size, event-loop delay while recording
// 200 MB/s of zstd-compressed 1 MiB frames, end-to-end throughput, and RSS while the disk is slower than the producer.
// Each section runs in a fresh process of the same runtime, so one section's heap and JIT state cannot skew the next.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { BagWriter, createFrame, registerBackend } from '@vlink/bag-core';
import { slowRawBackend } from './writer-backends.mjs';

const quickArg = process.argv.find((a) => a === '--quick' || a.startsWith('--quick='));
const quickSections = quickArg?.startsWith('--quick=') ? quickArg.slice(8).split(',') : undefined;
const quick = quickArg !== undefined && quickSections === undefined;
const smoke = process.argv.includes('--smoke');
const runtime = globalThis.Bun ? 'bun' : globalThis.Deno ? 'deno' : 'node';
const version = globalThis.Bun ? Bun.version : globalThis.Deno ? Deno.version.deno : process.versions.node;
const MiB = 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), 'vlink-writer-bench-'));
let fileNo = 0;

// The recording backend: `.vcap` with zstd chunks when @vlink/bag is built (importing it registers .vdb and .vcap,
// both worker-capable), else the test memory backend.
let ext = '.vcap';
let backendLabel = '.vcap (@vlink/bag mcap backend), zstd chunks where noted';
const bag = await import('@vlink/bag').catch(() => undefined);
if (!bag?.mcapBackend?.workerModule) {
  const { memoryBackend } = await import('@vlink/bag-core/testing');
  registerBackend(memoryBackend);
  ext = '.memjson';
  backendLabel = '.memjson (memory backend; @vlink/bag not built)';
}
registerBackend(slowRawBackend);

const MODES = {
  worker: {},
  'worker+transfer': { transferPayloads: true },
  sync: { syncMode: true },
};

/**
 * The baseline of section 1: not a writer, the least any push that queues a frame must do — look its url up and keep
 * its buffer — timed the same way, on a fresh buffer as in transfer mode. Cold, in a task of its own after a fresh
 * megabyte was written, even this costs microseconds on a VM: what a goal in µs is up against at large frames.
 * `data.buffer`, not the view: a transferring push needs the buffer for the transfer list, and reading it cold costs
 * something (by hand, medians of four interleaved rounds: 0.2–1 µs at 256 KiB–1 MiB). Below 16 KiB, where push
 * copies instead, this overstates the floor: V8 allocates a small array's buffer on first access.
 */
function floorWriter() {
  const ids = new Map(Array.from({ length: 4 }, (_, i) => [`bench/${i}`, i]));
  const kept = [];
  return {
    push(frame) {
      kept.push(frame.data.buffer, ids.get(frame.url));
      if (kept.length >= 64) kept.length = 0;
    },
    close: async () => {},
    stats: () => ({ dropped: {} }),
  };
}
const PUSH_MODES = { ...MODES, floor: { floor: true, transferPayloads: true } };

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const turn = () => new Promise((resolve) => setImmediate(resolve));
const path = (e = ext) => join(dir, `b${fileNo++}${e}`);

/** Half random, half low-entropy bytes (like sample frames): zstd gets something to do but not everything. */
function payload(size, seed) {
  const out = new Uint8Array(size);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = (i >> 6) % 2 === 0 ? x & 0xff : i & 0x0f;
  }
  return out;
}

function percentiles(samples, ...ps) {
  const sorted = Float64Array.from(samples).sort();
  return Object.fromEntries(
    ps.map((p) => [`p${p}`, round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0)]),
  );
}
const round = (v, d = 3) => Math.round(v * 10 ** d) / 10 ** d;

// ---------------------------------------------------------------------------------------------------------------
// 1. push() cost per frame size, at a rate the writer can sustain (200 MB/s or 200 000 frames/s, whichever is lower):
// a 1 ms timer pushes the frames that are due, as a producer fed by I/O callbacks would. Copying modes push the same
// buffer again (they may: the payload is copied); the transfer mode needs a fresh buffer per push, filled outside the
// timed region. The `floor` mode is the baseline (see `floorWriter`). Overload is what sections 3 and 4 are for. Each cell runs three times, interleaved with the other
// modes, and reports the median run per percentile (`runs` keeps all three): the machine may be shared.

async function pushCost() {
  const sizes = [64, 1024, 16 * 1024, 64 * 1024, 256 * 1024, MiB];
  const seconds = smoke ? 0.1 : quick ? 0.5 : 1.5;
  const repeats = smoke || quick ? 1 : 3;
  const out = [];
  for (const size of sizes) {
    const template = payload(size, size);
    const rate = Math.min((200 * MiB) / size, 200_000);
    const count = Math.max(300, Math.floor(rate * seconds));
    const runs = {};
    for (let r = 0; r < repeats; r++)
      for (const [mode, options] of Object.entries(PUSH_MODES)) {
        const writer = options.floor ? floorWriter() : await BagWriter.create(path(), { ...options, compress: 'none' });
        const samples = new Float64Array(count);
        const warmup = Math.min(200, count >> 2);
        await new Promise((resolve) => {
          const started = performance.now();
          let i = -warmup;
          const timer = setInterval(() => {
            const due = Math.min(count, Math.floor(((performance.now() - started) / 1000) * rate) - warmup);
            for (; i < due; i++) {
              let data = template;
              if (options.transferPayloads) {
                data = new Uint8Array(size);
                data.set(template);
              }
              const frame = createFrame({ timestamp: i + warmup, url: `bench/${i & 3}`, data });
              const t0 = performance.now();
              writer.push(frame);
              const t1 = performance.now();
              if (i >= 0) samples[i] = (t1 - t0) * 1000;
            }
            if (i >= count) {
              clearInterval(timer);
              resolve();
            }
          }, 1);
        });
        await writer.close();
        (runs[mode] ??= []).push({ ...percentiles(samples, 50, 99, 99.9), dropped: sumDropped(writer.stats()) });
      }
    for (const [mode, list] of Object.entries(runs)) {
      const median = (key) => list.map((run) => run[key]).sort((a, b) => a - b)[list.length >> 1];
      const row = {
        size,
        mode,
        frames: count,
        p50: median('p50'),
        p99: median('p99'),
        'p99.9': median('p99.9'),
        dropped: median('dropped'),
        runs: list,
      };
      out.push(row);
      console.log(
        `push ${String(size).padStart(7)} B  ${mode.padEnd(16)} p50 ${row.p50} µs  p99 ${row.p99} µs  p99.9 ${row['p99.9']} µs`,
      );
    }
  }
  return out;
}

// 1b. Why large frames cost more per push at 200 MB/s: at 1 MiB that is 200 pushes a second, each alone in its timer
// task, so each finds the writer's code and data out of cache. This section pushes two frames back to back in each
// task (transferred, so no copy in either) and times both: the first is the cold call a paced producer pays, the
// second the same call warm. Diagnostic only; the goals are judged on section 1.

async function pushWarmth() {
  const sizes = [64, 64 * 1024, MiB];
  const pairs = smoke ? 40 : quick ? 200 : 600;
  const out = [];
  for (const size of sizes) {
    const template = payload(size, size);
    const writer = await BagWriter.create(path(), { transferPayloads: true, compress: 'none' });
    const first = new Float64Array(pairs);
    const second = new Float64Array(pairs);
    for (let i = -20; i < pairs; i++) {
      const frames = [0, 1].map((k) => {
        const data = new Uint8Array(size);
        data.set(template);
        return createFrame({ timestamp: 2 * (i + 20) + k, url: `bench/${k}`, data });
      });
      const t0 = performance.now();
      writer.push(frames[0]);
      const t1 = performance.now();
      writer.push(frames[1]);
      const t2 = performance.now();
      if (i >= 0) {
        first[i] = (t1 - t0) * 1000;
        second[i] = (t2 - t1) * 1000;
      }
      await sleep(size >= MiB ? 10 : 2);
    }
    await writer.close();
    const row = { size, pairs, first: percentiles(first, 50, 99), second: percentiles(second, 50, 99) };
    out.push(row);
    console.log(
      `push warmth ${String(size).padStart(7)} B  first in task p50 ${row.first.p50} µs p99 ${row.first.p99} µs  second p50 ${row.second.p50} µs p99 ${row.second.p99} µs`,
    );
  }
  return { pushes: out, arming: await armingCost(pairs) };
}

/** What arming a callback costs as the first thing in a task: setImmediate (the writer's old hand-over) vs a promise reaction (now). */
async function armingCost(n) {
  const settled = Promise.resolve();
  const noop = () => {};
  const ways = {
    nothing: () => {},
    setImmediate: () => setImmediate(noop),
    promiseReaction: () => void settled.then(noop),
  };
  const samples = Object.fromEntries(Object.keys(ways).map((k) => [k, new Float64Array(n)]));
  for (let i = -20; i < n; i++) {
    for (const [name, arm] of Object.entries(ways)) {
      await sleep(2);
      const t0 = performance.now();
      arm();
      const t1 = performance.now();
      if (i >= 0) samples[name][i] = (t1 - t0) * 1000;
    }
  }
  const out = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, percentiles(v, 50, 99)]));
  console.log(
    `arming a callback first in a task (µs p50): nothing ${out.nothing.p50}, setImmediate ${out.setImmediate.p50}, promise reaction ${out.promiseReaction.p50}`,
  );
  return out;
}

function sumDropped(stats) {
  return Object.values(stats.dropped).reduce((a, b) => a + b, 0);
}

// ---------------------------------------------------------------------------------------------------------------
// 2. Event-loop delay while recording RATE bytes/s of 1 MiB frames with zstd. The producer pushes on a 5 ms timer,
// as many frames as the schedule says are due; the delay monitor sees how late the loop gets to anything.

async function loopDelayMonitor() {
  // Node and Bun implement the histogram; Deno 2.9 exports one whose readings stay near zero even while syncMode
  // blocks the loop for hundreds of ms, so Deno (and anything else) gets the lateness probe.
  if (runtime === 'deno') return latenessProbe();
  try {
    const { monitorEventLoopDelay } = await import('node:perf_hooks');
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    // A runtime that exports the function without recording anything gets the probe instead.
    await sleep(30);
    if (histogram.count > 0) {
      histogram.reset();
      return {
        kind: 'perf_hooks.monitorEventLoopDelay (resolution 1 ms)',
        stop: () => {
          histogram.disable();
          return {
            p50: round(histogram.percentile(50) / 1e6),
            p99: round(histogram.percentile(99) / 1e6),
            max: round(histogram.max / 1e6),
          };
        },
      };
    }
    histogram.disable();
  } catch {}
  return latenessProbe();
}

/** A 1 ms interval that records how late each tick fires. */
function latenessProbe() {
  const late = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    late.push(Math.max(0, now - last - 1));
    last = now;
  }, 1);
  return {
    kind: 'setInterval(1 ms) lateness probe',
    stop: () => {
      clearInterval(timer);
      const p = percentiles(late, 50, 99);
      return { ...p, max: round(Math.max(...late)) };
    },
  };
}

async function loopDelay() {
  const rate = 200 * MiB;
  const seconds = smoke ? 0.5 : quick ? 2 : 5;
  const frames = Array.from({ length: 8 }, (_, i) => payload(MiB, 100 + i));
  const out = [];
  // The row names its mode from writer.mode, so this list holds only the options.
  for (const options of [{}, { syncMode: true }, { worker: false }]) {
    const writer = await BagWriter.create(path(), { ...options, compress: 'zstd' });
    const monitor = await loopDelayMonitor();
    const started = performance.now();
    let pushed = 0;
    let refused = 0;
    await new Promise((resolve) => {
      const timer = setInterval(() => {
        const elapsed = (performance.now() - started) / 1000;
        if (elapsed >= seconds) {
          clearInterval(timer);
          return resolve();
        }
        const due = Math.floor((elapsed * rate) / MiB);
        while (pushed < due) {
          if (writer.push(createFrame({ url: 'camera', data: frames[pushed & 7] })) < 0) refused++;
          pushed++;
        }
      }, 5);
    });
    const elapsed = (performance.now() - started) / 1000;
    const delay = monitor.stop();
    const closeStart = performance.now();
    await writer.close();
    const row = {
      mode: writer.mode,
      seconds: round(elapsed, 2),
      offeredMBps: round((pushed * MiB) / elapsed / 1e6, 1),
      writtenMBps: round(writer.stats().writtenBytes / ((performance.now() - started) / 1000) / 1e6, 1),
      refused,
      loopDelayMs: delay,
      probe: monitor.kind,
      closeMs: round(performance.now() - closeStart, 1),
    };
    out.push(row);
    console.log(
      `loop ${row.mode.padEnd(6)} offered ${row.offeredMBps} MB/s  delay p50 ${delay.p50} ms  p99 ${delay.p99} ms  max ${delay.max} ms  refused ${refused}`,
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// 3. End-to-end throughput: push everything as fast as the writer takes it, until close() resolves. A refused push
// (queue full) waits 1 ms and is retried (a producer that spins would only steal the worker's core), so both modes
// write the same bytes. Steady state: each writer first takes a warm-up of 1/16 of the workload (and a durable push,
// so it is all on disk) before the clock starts, since every worker starts with a cold JIT and cold wasm. The modes
// run in pairs, six in a full run (two otherwise), in the order sync-worker, worker-sync, … (so neither always
// follows the other's gigabyte of writeback), and the ratio is the median of the pairs' own ratios: the disk makes
// single runs of one mode differ by up to 2× (260–580 MB/s in one run of four pairs, always sync first), and a ratio of
// two medians taken apart swung between 0.75 and 0.98 from one idle run to the next. Every run is kept in `runs`
// (`runsMBps`, in the order run). Neither mode writes the summary
// sidecar (`summary: false`): it is a read of the whole file after close, the same for both, and it would hide part of
// the gap between them.

async function throughput() {
  const workloads = [
    { name: '1 MiB frames, zstd', size: MiB, compress: 'zstd', total: (smoke ? 16 : quick ? 256 : 1024) * MiB },
    {
      name: '1 KiB frames, no compression',
      size: 1024,
      compress: 'none',
      total: (smoke ? 4 : quick ? 128 : 512) * MiB,
    },
  ];
  const out = [];
  for (const w of workloads) {
    const frames = Array.from({ length: 8 }, (_, i) => payload(w.size, 7 + i));
    const count = Math.floor(w.total / w.size);
    const result = { workload: w.name, frames: count };
    const pairs = smoke || quick ? 2 : 6;
    const runs = { sync: [], worker: [] };
    const order = Array.from({ length: pairs }, (_, pair) =>
      pair % 2
        ? [
            ['worker', {}],
            ['sync', { syncMode: true }],
          ]
        : [
            ['sync', { syncMode: true }],
            ['worker', {}],
          ],
    ).flat();
    for (const [mode, options] of order) {
      const writer = await BagWriter.create(path(), { ...options, compress: w.compress, summary: false });
      let retries = 0;
      const warmup = count >> 4;
      for (let i = 0; i < warmup; i++) {
        while (writer.push(createFrame({ timestamp: i, url: `t/${i & 7}`, data: frames[i & 7] })) < 0) await sleep(1);
      }
      await writer.pushDurable(createFrame({ timestamp: warmup, url: 't/0', data: frames[0] }));
      const t0 = performance.now();
      for (let i = 0; i < count; i++) {
        const frame = createFrame({ timestamp: i, url: `t/${i & 7}`, data: frames[i & 7] });
        while (writer.push(frame) < 0) {
          retries++;
          await sleep(1);
        }
        if ((i & 255) === 255) await turn();
      }
      await writer.close();
      const seconds = (performance.now() - t0) / 1000;
      const run = {
        MBps: round(w.total / seconds / 1e6, 1),
        seconds: round(seconds, 2),
        queueFullRetries: retries,
        written: writer.stats().writtenFrames - warmup - 1,
      };
      console.log(`throughput ${w.name.padEnd(28)} ${mode.padEnd(6)} ${run.MBps} MB/s (${run.seconds} s)`);
      runs[mode].push(run);
    }
    for (const mode of ['sync', 'worker']) {
      const mbps = runs[mode].map((r) => r.MBps);
      const sorted = [...mbps].sort((a, b) => a - b);
      const median = (sorted[(sorted.length - 1) >> 1] + sorted[sorted.length >> 1]) / 2;
      result[mode] = {
        MBps: round(median, 1),
        runsMBps: mbps,
        queueFullRetries: Math.max(...runs[mode].map((r) => r.queueFullRetries)),
        written: Math.min(...runs[mode].map((r) => r.written)),
      };
    }
    const ratios = runs.worker.map((run, pair) => run.MBps / runs.sync[pair].MBps).sort((a, b) => a - b);
    result.workerVsSync = round((ratios[(ratios.length - 1) >> 1] + ratios[ratios.length >> 1]) / 2, 3);
    result.workerVsSyncOfMedians = round(result.worker.MBps / result.sync.MBps, 3);
    out.push(result);
  }
  return out;
}

// 3b. Is the writer slower in a worker thread? The same syncMode loop (1 KiB frames, no compression) on this thread
// and alone inside a worker_threads Worker, alternating. Diagnostic for section 3: if they match, what async mode
// loses is the hand-over between two threads, not running in a worker.

async function syncLoopMBps(total) {
  const frames = Array.from({ length: 8 }, (_, i) => payload(1024, 11 + i));
  const writer = await BagWriter.create(path(), { syncMode: true, compress: 'none', summary: false });
  const count = Math.floor(total / 1024);
  const t0 = performance.now();
  for (let i = 0; i < count; i++) writer.push(createFrame({ timestamp: i, url: `t/${i & 7}`, data: frames[i & 7] }));
  await writer.close();
  return round(total / ((performance.now() - t0) / 1000) / 1e6, 1);
}

async function workerAlone() {
  const total = (smoke ? 4 : quick ? 64 : 256) * MiB;
  const runs = { thisThread: [], workerThread: [] };
  for (let r = 0; r < (smoke ? 1 : 3); r++) {
    runs.thisThread.push(await syncLoopMBps(total));
    const worker = new Worker(new URL(import.meta.url), { workerData: { syncLoopBytes: total } });
    runs.workerThread.push(
      await new Promise((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
    );
    await worker.terminate();
  }
  const best = (list) => Math.max(...list);
  const row = { bytes: total, runs, thisThreadMBps: best(runs.thisThread), workerThreadMBps: best(runs.workerThread) };
  console.log(
    `syncMode 1 KiB loop: this thread ${runs.thisThread.join(', ')} MB/s; alone in a worker ${runs.workerThread.join(', ')} MB/s`,
  );
  return row;
}

// ---------------------------------------------------------------------------------------------------------------
// 4. RSS while the disk (50 MB/s) is slower than the producer (200 MB/s of 1 MiB frames): the queue limit must hold
// memory while the excess is refused and counted.

async function slowDisk() {
  const maxMemorySize = (smoke ? 32 : quick ? 128 : 256) * MiB;
  const seconds = smoke ? 1 : quick ? 4 : 8;
  const rate = 200 * MiB;
  process.env.VLINK_BENCH_DISK_MBPS = '50';
  const frames = Array.from({ length: 8 }, (_, i) => payload(MiB, 300 + i));
  globalThis.gc?.();
  const writer = await BagWriter.create(path('.slowraw'), { maxMemorySize });
  await sleep(100);
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  let pushed = 0;
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      if (elapsed >= seconds) {
        clearInterval(timer);
        return resolve();
      }
      const due = Math.floor((elapsed * rate) / MiB);
      while (pushed < due) writer.push(createFrame({ url: 'camera', data: frames[pushed++ & 7] }));
    }, 5);
  });
  const queuedAtStop = writer.stats().queuedBytes;
  await writer.close();
  clearInterval(sampler);
  const stats = writer.stats();
  const row = {
    diskMBps: 50,
    offeredMBps: round((pushed * MiB) / seconds / 1e6, 1),
    maxMemorySizeMiB: maxMemorySize / MiB,
    baselineRssMiB: round(baseline / MiB, 1),
    peakRssMiB: round(peak / MiB, 1),
    growthMiB: round((peak - baseline) / MiB, 1),
    queuedAtStopMiB: round(queuedAtStop / MiB, 1),
    pushed,
    written: stats.writtenFrames,
    droppedQueueMemory: stats.dropped.queueMemory,
    droppedQueueDepth: stats.dropped.queueDepth,
  };
  console.log(
    `slow disk: peak RSS ${row.peakRssMiB} MiB (baseline ${row.baselineRssMiB}, limit ${row.maxMemorySizeMiB} MiB), dropped ${row.droppedQueueMemory} of ${pushed}`,
  );
  return row;
}

// ---------------------------------------------------------------------------------------------------------------

// Inside workerAlone's worker: run the loop, report, and wait to be terminated (the code below is the parent's).
if (!isMainThread && workerData?.syncLoopBytes) {
  const result = await syncLoopMBps(workerData.syncLoopBytes);
  // This thread made a folder of its own when it loaded this module; it is terminated, never reaching the parent's rm.
  rmSync(dir, { recursive: true, force: true });
  parentPort.postMessage(result);
  await new Promise(() => {});
}

const SECTIONS = { pushCost, pushWarmth, loopDelay, throughput, workerAlone, slowDisk };
const section = process.argv.find((a) => a.startsWith('--section='))?.slice(10);
if (section) {
  // Child: run one section, hand its result to the parent as the last line of stdout.
  try {
    const result = await SECTIONS[section]();
    console.log(`RESULT ${JSON.stringify(result)}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
rmSync(dir, { recursive: true, force: true });

const results = {
  runtime,
  version,
  cpus: cpus().length,
  loadAverageAtStart: loadavg().map((l) => round(l, 2)),
  date: new Date().toISOString(),
  quick: quickSections ?? quick,
  backend: backendLabel,
};
const script = new URL(import.meta.url).pathname;
const realtime = (process.argv.find((a) => a.startsWith('--rt='))?.slice(5) ?? '').split(',').filter(Boolean);
results.realtimeSections = realtime;
for (const name of Object.keys(SECTIONS)) {
  const short = quick || quickSections?.includes(name);
  const args = [
    ...(runtime === 'deno' ? ['run', '-A'] : []),
    script,
    `--section=${name}`,
    ...(short ? ['--quick'] : []),
    ...(smoke ? ['--smoke'] : []),
  ];
  const [command, argv] = realtime.includes(name)
    ? ['chrt', ['-f', '10', process.execPath, ...args]]
    : [process.execPath, args];
  const child = spawnSync(command, argv, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * MiB,
  });
  const lines = child.stdout.trimEnd().split('\n');
  for (const line of lines) if (!line.startsWith('RESULT ')) console.log(line);
  const last = lines.at(-1) ?? '';
  if (child.status !== 0 || !last.startsWith('RESULT '))
    throw new Error(`section ${name} failed (exit ${child.status})`);
  results[name] = JSON.parse(last.slice(7));
}
results.loadAverageAtEnd = loadavg().map((l) => round(l, 2));

const worker = (size) => results.pushCost.find((r) => r.size === size && r.mode === 'worker');
const loop = results.loopDelay.find((r) => r.mode === 'worker');
results.goals = {
  'push p50 <= 2 us (64 B - 16 KiB, worker)': [64, 1024, 16384].every((s) => worker(s).p50 <= 2),
  'push p50 <= 2 us (64 KiB - 1 MiB, worker+transfer)': [65536, 262144, MiB].every(
    (s) => results.pushCost.find((r) => r.size === s && r.mode === 'worker+transfer').p50 <= 2,
  ),
  'push p99 <= 20 us (64 B - 16 KiB, worker)': [64, 1024, 16384].every((s) => worker(s).p99 <= 20),
  'push p99 <= 20 us (1 MiB, worker+transfer)':
    results.pushCost.find((r) => r.size === MiB && r.mode === 'worker+transfer').p99 <= 20,
  'loop delay p99 <= 5 ms (200 MB/s zstd, worker)': loop.loopDelayMs.p99 <= 5,
  'worker throughput >= 90 % of sync': results.throughput.every((t) => t.workerVsSync >= 0.9),
  'RSS growth <= maxMemorySize + 64 MiB': results.slowDisk.growthMiB <= results.slowDisk.maxMemorySizeMiB + 64,
};
console.log(results.goals);
const resultsDir = smoke ? './results/smoke/' : './results/';
mkdirSync(new URL(resultsDir, import.meta.url), { recursive: true });
// A run with real-time sections is kept apart from the normal-priority one: both are worth reading.
const file = `writer-${runtime}${realtime.length > 0 ? '-rt' : ''}.json`;
writeFileSync(new URL(`${resultsDir}${file}`, import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.log(`wrote bench/${resultsDir.slice(2)}${file}`);
