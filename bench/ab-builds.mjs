#!/usr/bin/env node
// Two builds of this repository side by side (issue 27: a redesign must keep the benchmarks within 5 %).
//
// Loads `@vlink/bag` from this checkout ("head") and from another built checkout ("base", e.g. a `git worktree` of
// the commit before a change, after `npm ci && npm run build` there) into one process, and times the same work
// through each: write N frames with `BagWriter` (`syncMode`, and the default worker mode with `await write()` per
// frame), then read them back with the cursor, for `.vcap` and `.vdb`, 64 B / 4 KiB / 1 MiB payloads. The two builds
// take turns within every repetition (the order alternates), so drifts of the machine (load, page cache, CPU clock)
// hit both alike; the verdict is on the median speed ratio of pairs of repetitions, with a bootstrap 95 % interval.
// Each case is timed twice in a row per build: its first run, after the other cases, and a warm run right after it
// (the steady state of a long recording); each has its own verdict.
// Files go to /dev/shm where it exists (fsync is free there): what is compared is the code's work, not the disk's.
// --isolate runs each build's part of every repetition in a child process that loads that build only (see
// childRepetition: two builds in one process can interfere). Processes differ among themselves far more than 5 % on
// a VM (lib/process-speed.mjs), so each child also times a fixed memory-copy loop, and the verdict is given a second
// time at equal copy speed (lib/ab-stats.mjs, adjustedSpeed).
//
//   node bench/ab-builds.mjs --base /path/to/other/checkout [--reps 20] [--quick] [--isolate] [--warm 1]
//                            [--only write:vcap:sync:64,…] [--pool earlier-results.json]
//   bun …      deno run -A --node-modules-dir=manual bench/ab-builds.mjs --base …
// Results: bench/results/ab-builds-<runtime>.json (bench/tmp/ with --only, --quick or under 10 repetitions).
// --pool adds an earlier results file's repetitions to this run's (same base, cases and settings, and a head whose
// timed code has not changed since): more repetitions narrow the intervals without one run of hours.
// Speed = base time / head time (> 1: head is faster).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { adjustedSpeed, pairedSpeed, verdictOf } from './lib/ab-stats.mjs';
import { median } from './lib/format.mjs';
import { payload } from './lib/payload.mjs';
import { processSpeed } from './lib/process-speed.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const baseDir = option('--base');
if (!baseDir) {
  console.error('usage: ab-builds.mjs --base <built checkout> [--reps N] [--quick]');
  process.exit(2);
}
const quick = args.includes('--quick');
// An even number: the repetitions pair up (see speed()).
const REPS = 2 * Math.ceil(Number(option('--reps') ?? (quick ? 6 : 20)) / 2);
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;
const scale = quick ? 0.25 : 1;
// Warm runs after each case's first run, timed as their median (--warm N; more of them steady a noisy machine).
const WARM_RUNS = Math.max(1, Number(option('--warm') ?? 1));
const SIZES = [
  { size: 64, frames: Math.round(200_000 * scale) },
  { size: 4096, frames: Math.round(20_000 * scale) },
  { size: 1024 * 1024, frames: Math.round(256 * scale) },
];
// What the timed work loads: the code of `@vlink/bag` and of the packages it depends on (their READMEs can change).
const TIMED_CODE = ['bag', 'core', 'backend-sqlite', 'backend-mcap', 'backend-interop'].flatMap((p) => [
  `packages/${p}/src`,
  `packages/${p}/package.json`,
]);

const FORMATS = ['vcap', 'vdb'];
const MODES = ['sync', 'worker'];
const round = (x, d = 3) => Math.round(x * 10 ** d) / 10 ** d;

// Each build, and each format of it, gets its own instance of the timed loops (the module loaded under several
// urls): a call site shared by both builds would see two sets of classes and frame objects, and the JIT would tune it
// for the mix rather than for either build. One instance per build and format keeps each loop as monomorphic as a
// user's loop over one bag. Loaded on first use: with --isolate, each child process loads one build only.
const buildDirs = { head: join(here, '..'), base: resolve(baseDir) };
const builds = new Map();
async function buildOf(name) {
  if (!builds.has(name)) {
    const bag = await import(pathToFileURL(join(buildDirs[name], 'packages/bag/dist/index.js')).href);
    const works = {};
    for (const format of FORMATS)
      works[format] = await import(
        `${pathToFileURL(join(here, 'lib/ab-work.mjs')).href}?build=${name}&format=${format}`
      );
    builds.set(name, { bag, works });
  }
  return builds.get(name);
}
/** The checkout's commit, marked when its timed code has changes not committed (the build is then not the commit's). */
const commitOf = (dir) => {
  try {
    const git = (...a) => execFileSync('git', ['-C', dir, ...a], { encoding: 'utf8' }).trim();
    const changed = git('status', '--porcelain', '--untracked-files=no', '--', ...TIMED_CODE) !== '';
    return `${git('rev-parse', '--short', 'HEAD')}${changed ? '+changes' : ''}`;
  } catch {
    return 'unknown';
  }
};

// A child process (--isolate) writes into its parent's folder (--files).
const root = option('--files') ?? mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'vlink-ab-'));

async function timed(fn) {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

const cases = [];
for (const format of FORMATS) {
  for (const { size, frames } of SIZES) {
    const variants = Array.from({ length: 8 }, (_, i) => payload(size, i + 1));
    for (const mode of MODES) cases.push({ op: 'write', format, mode, size, frames, variants });
    cases.push({ op: 'read', format, mode: 'cursor', size, frames, variants });
  }
}
// --only op:format:mode:size[,…] keeps some cases (e.g. write:vcap:sync:64).
const only = option('--only')?.split(',');
if (only)
  cases.splice(0, cases.length, ...cases.filter((c) => only.includes(`${c.op}:${c.format}:${c.mode}:${c.size}`)));
const samples = new Map(cases.map((c) => [c, { head: [], base: [] }]));
// Each timed run is followed at once by a second one of the same case and build ("warm"). The first is the case as it
// comes after the others; the second measures the steady state of a long recording. They can differ by much: after
// the other cases' major GCs, V8 has flushed the bytecode of code not run meanwhile, and the first run pays for
// compiling and optimizing it again (Node 20, full run, 2026-12-05: the sync `.vcap` write of 64 B took 62.6 ms for
// 449cd65's 54.5, and 35.5 ms for its 36.5 with `--no-flush-bytecode`).
const warmSamples = new Map(cases.map((c) => [c, { head: [], base: [] }]));
// With --isolate: each child's memory-copy time (lib/process-speed.mjs), per build, in the order of the samples.
const copyMs = { head: [], base: [] };

/**
 * Runs every case once for each build of `order`, in turn: [first ms, warm ms] per case index and build (warm: the
 * median of the --warm runs right after the first).
 */
async function repetition(order) {
  const times = cases.map(() => ({}));
  for (const [index, c] of cases.entries()) {
    for (const name of order) {
      const { bag, works } = await buildOf(name);
      const work = works[c.format];
      const path = join(root, `${name}-${c.size}.${c.format}`);
      const runs = [];
      for (let run = 0; run < 1 + WARM_RUNS; run++) {
        if (c.op === 'write') {
          rmSync(path, { force: true, recursive: true });
          runs.push(await timed(() => work.write(bag, path, c.mode, c.frames, c.variants)));
        } else {
          // Each build reads the file it wrote in sync mode (written again when a later repetition replaced it).
          if (!existsSync(path)) await work.write(bag, path, 'sync', c.frames, c.variants);
          runs.push(await timed(() => work.read(bag, path, c.frames)));
        }
      }
      times[index][name] = [runs[0], median(runs.slice(1))];
    }
  }
  return times;
}

/**
 * With --isolate, each build's part of a repetition runs in a child process of the same runtime that loads that build
 * only (`--child head|base` prints its times as one JSON line): two builds in one process can interfere, as the A/A
 * check in bench/README.md shows, and then a child per build and repetition is the cleaner comparison.
 */
function childRepetition(name) {
  const runtimeArgs =
    runtime === 'deno' ? ['run', '-A', '--node-modules-dir=manual'] : runtime === 'node' ? process.execArgv : [];
  const passed = [
    '--base',
    baseDir,
    '--files',
    root,
    '--warm',
    String(WARM_RUNS),
    ...(only ? ['--only', only.join(',')] : []),
    ...(quick ? ['--quick'] : []),
  ];
  const out = execFileSync(
    process.execPath,
    [...runtimeArgs, fileURLToPath(import.meta.url), '--child', name, ...passed],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(out.trim().split('\n').at(-1));
}

/** `repetition(order)` with each build's part run by `childRepetition`; records each child's copy time. */
function isolatedRepetition(order) {
  const times = cases.map(() => ({}));
  for (const name of order) {
    const child = childRepetition(name);
    copyMs[name].push(child.copyMs);
    for (const [index, runs] of child.times.entries()) times[index][name] = runs[name];
  }
  return times;
}

const child = option('--child');
if (child) {
  // The files the read cases read are written again by each child: kept from one child to the next, a file's pages
  // would stay where they first landed for the whole run, one build's in fast memory and the other's perhaps in slow
  // (an A/A run read one copy 6–10 % slower than the other, 2026-12-07, Bun, cursor reads of 4 KiB frames).
  for (const c of cases) if (c.op === 'read') rmSync(join(root, `${child}-${c.size}.${c.format}`), { force: true });
  // A first pass that is not timed: as in one process after the first repetition, each case then comes after the
  // others with its code compiled, not at the cold start of a process.
  await repetition([child]);
  // The process's memory state, timed on both sides of the timed pass (it rarely changes within a process).
  const before = processSpeed();
  const times = await repetition([child]);
  console.log(JSON.stringify({ copyMs: Math.sqrt(before * processSpeed()), times }));
  process.exit(0);
}
const isolate = args.includes('--isolate');
const pooled = option('--pool') ? earlierRun(option('--pool')) : undefined;
for (let rep = 0; rep < REPS; rep++) {
  const order = rep % 2 === 0 ? ['head', 'base'] : ['base', 'head'];
  const times = isolate ? isolatedRepetition(order) : await repetition(order);
  for (const [index, c] of cases.entries()) {
    for (const name of order) {
      samples.get(c)[name].push(times[index][name][0]);
      warmSamples.get(c)[name].push(times[index][name][1]);
    }
  }
  process.stdout.write(`rep ${rep + 1}/${REPS}\r`);
}
rmSync(root, { recursive: true, force: true });
if (pooled) addEarlierRun(pooled);

/**
 * An earlier results file whose repetitions can join this run's: the same runtime, base, cases and settings, and a
 * head whose timed code is the same as this checkout's (a commit that changed only bench/, docs or the CLI pools).
 */
function earlierRun(file) {
  const earlier = JSON.parse(readFileSync(file, 'utf8'));
  const refuse = (why) => {
    console.error(`--pool ${file}: ${why}`);
    process.exit(2);
  };
  if (earlier.runtime !== runtime) refuse(`ran on ${earlier.runtime}, this run on ${runtime}`);
  if (earlier.base !== commitOf(resolve(baseDir)))
    refuse(`its base is ${earlier.base}, not ${commitOf(resolve(baseDir))}`);
  if (earlier.isolated !== isolate || earlier.warmRuns !== WARM_RUNS || earlier.quick !== quick)
    refuse('ran with other --isolate, --warm or --quick settings');
  const key = (c) => `${c.op}:${c.format}:${c.mode}:${c.size}:${c.frames}`;
  if (earlier.results.map(key).join() !== cases.map(key).join()) refuse('ran other cases');
  if (earlier.head.endsWith('+changes')) refuse('its head had changes not committed');
  try {
    execFileSync('git', ['-C', join(here, '..'), 'diff', '--quiet', earlier.head, '--', ...TIMED_CODE]);
  } catch {
    refuse(`the timed code changed since its head ${earlier.head}`);
  }
  return earlier;
}

/** Puts an earlier run's repetitions before this run's (each run has an even number, so pairs stay whole). */
function addEarlierRun(earlier) {
  for (const [index, c] of cases.entries()) {
    const { first, warm } = earlier.results[index].times;
    for (const name of ['head', 'base']) {
      samples.get(c)[name].unshift(...first[name]);
      warmSamples.get(c)[name].unshift(...warm[name]);
    }
  }
  if (isolate) for (const name of ['head', 'base']) copyMs[name].unshift(...earlier.copyMs[name]);
}

/**
 * Medians, speed and verdict of one case's samples; with --isolate also the speed adjusted for each process's copy
 * speed (`adjusted`, see adjustedSpeed).
 */
function compare({ head, base }) {
  const s = pairedSpeed(head, base);
  const enough = head.length >= 10;
  const adjusted = isolate ? adjustedSpeed(head, base, copyMs) : undefined;
  return {
    headMs: round(median(head), 2),
    baseMs: round(median(base), 2),
    speed: round(s.median),
    speed95: [round(s.low), round(s.high)],
    verdict: verdictOf(s, enough),
    ...(adjusted && {
      adjusted: {
        speed: round(adjusted.median),
        speed95: [round(adjusted.low), round(adjusted.high)],
        slope: round(adjusted.slope, 2),
        verdict: verdictOf(adjusted, enough),
      },
    }),
  };
}
const interval = (x) => `${round(x.speed, 2)} [${round(x.speed95[0], 2)}, ${round(x.speed95[1], 2)}] ${x.verdict}`;
const line = (r) =>
  `head ${round(r.headMs, 1)} ms, base ${round(r.baseMs, 1)} ms, speed ${interval(r)}` +
  (r.adjusted ? `, at equal copy speed ${interval(r.adjusted)} (slope ${r.adjusted.slope})` : '');

// Every repetition's ms, so a reader can redo the analysis (in repetition order; with --isolate, as copyMs).
const ms = ({ head, base }) => ({ head: head.map((x) => round(x, 2)), base: base.map((x) => round(x, 2)) });
const results = [];
for (const c of cases) {
  const first = compare(samples.get(c));
  const warm = compare(warmSamples.get(c));
  const times = { first: ms(samples.get(c)), warm: ms(warmSamples.get(c)) };
  results.push({ op: c.op, format: c.format, mode: c.mode, size: c.size, frames: c.frames, ...first, warm, times });
  console.log(`${c.op} ${c.format} ${c.mode} ${c.size} B × ${c.frames}: ${line(first)}; warm: ${line(warm)}`);
}

const out = {
  bench: 'ab-builds',
  runtime,
  runtimeVersion,
  date: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length },
  reps: REPS + (pooled?.reps ?? 0),
  ...(pooled && {
    pooled: [
      ...(pooled.pooled ?? [{ head: pooled.head, date: pooled.date, reps: pooled.reps }]),
      { head: commitOf(join(here, '..')), date: new Date().toISOString(), reps: REPS },
    ],
  }),
  isolated: isolate,
  warmRuns: WARM_RUNS,
  quick,
  head: commitOf(join(here, '..')),
  base: commitOf(resolve(baseDir)),
  files: root.startsWith('/dev/shm') ? '/dev/shm' : 'tmpdir',
  ...(isolate && { copyMs: ms(copyMs) }),
  results,
};
// A run of some cases (--only), of quick sizes or of too few repetitions does not replace the committed results.
const resultsDir = only || quick || out.reps < 10 ? join(here, 'tmp') : join(here, 'results');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `ab-builds-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
