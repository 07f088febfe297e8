#!/usr/bin/env node
// Checks that no tracked file points outside the repository, runs the linter (Biome) and the import-cycle check,
// then the one compiled test suite (packages/*/dist-test/**/*.test.js: each package's test build, beside its product
// build in dist, which holds no test) under Node, Bun and Deno, then the Python client's tests, the examples, the
// browser tests of the web player, the install test of the packed tarballs, and a smoke run of the benchmarks.
// Usage: node scripts/test-all.mjs [--build] [repository|lint|node|bun|deno|packaging|python|examples|browser|install|bench ...]   (default: all)
// `--build` (what `npm test` passes) builds the packages first (`turbo run build`), making the Python venv beside it,
// and the docs site in a lane (`docs`).
// `node` also checks the coverage of its run (scripts/check-coverage.mjs); `coverage` alone re-checks the last run.
// `lint` also checks the compiled import graph for cycles (scripts/check-cycles.mjs; `cycles` alone runs only that)
// and how many files a frame passes through (scripts/frame-path.mjs; `frame-path` alone).
// The long stages run in two lanes at once (see `lanes` below); VLINK_TEST_LANES=1 runs them one after the other.
import { spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { failureDigest } from './failure-digest.mjs';

const root = resolve(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const withBuild = process.argv.includes('--build');
const wanted = process.argv.slice(2).filter((arg) => arg !== '--build');
const runtimes =
  wanted.length > 0
    ? wanted
    : ['repository', 'lint', 'node', 'bun', 'deno', 'packaging', 'python', 'examples', 'browser', 'install', 'bench'];

function findTests(dir, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) findTests(path, out);
    else if (entry.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const packageDirs = ['packages', 'examples']
  .map((d) => join(root, d))
  .filter(existsSync)
  .flatMap((d) => readdirSync(d).map((p) => join(d, p)));
const findTestFiles = () => packageDirs.flatMap((p) => findTests(join(p, 'dist-test'))).sort();
/** The compiled test files; found again after the `build` stage, which makes them. */
let testFiles = findTestFiles();

// Timeouts: every test takes describe/test/it from @vlink/fixtures/test, which gives each test a 120 s timeout that
// all three runtimes honour and kills (naming it) a test that blocks its thread. On top of that, Node bounds each
// file (its --test-timeout is per file on Node 20) and Bun each hook.
// Coverage: the Node run is measured by c8 (V8's own coverage, mapped back to the TypeScript through the source
// maps) and checked against per-package thresholds by scripts/check-coverage.mjs. c8 rather than Node's
// --experimental-test-coverage, which on Node 20 has no thresholds, no include/exclude and no source maps.
/** The three runtime suites' commands over `files`. */
const suiteCommands = (files) => ({
  node: [
    bin('c8'),
    ['--config', join(root, '.c8rc.json'), 'node', '--test', '--test-concurrency=1', '--test-timeout=900000', ...files],
  ],
  bun: [bin('bun'), ['test', '--timeout=120000', ...files.map((f) => `./${f.slice(root.length + 1)}`)]],
  deno: [bin('deno'), ['test', '-A', '--no-check', '--node-modules-dir=manual', ...files]],
});
const commands = {
  ...suiteCommands(testFiles),
  // The docs site is built in a lane of its own (`docs`, below): nothing the suites run needs it, and last in the
  // chain of builds it held every lane back by about 40 s with one core idle.
  build: [bin('turbo'), ['run', 'build', '--filter=!@vlink/docs']],
  docs: ['npm', ['run', 'build', '-w', '@vlink/docs']],
  coverage: ['node', [join(root, 'scripts', 'check-coverage.mjs')]],
  // The linter and formatter (Biome) first: a formatting slip fails in seconds, before the long suites.
  lint: [bin('biome'), ['check', '.']],
  // Part of `lint`: no import cycle inside a package (the compiled import graph, so after the build).
  cycles: ['node', [join(root, 'scripts', 'check-cycles.mjs')]],
  // Part of `lint`: the files a `.vcap` frame passes through per frame, measured (scripts/frame-path.mjs); the bound is
  // today's count, 10 in every mode (issue #27), so the path cannot quietly grow.
  'frame-path': ['node', [join(root, 'scripts', 'frame-path.mjs'), '--max', '10']],
  // No tracked file may point outside the repository (a clone has nothing beside it).
  repository: ['node', [join(root, 'scripts', 'check-repository.mjs')]],
  python: ['bash', [join(root, 'scripts', 'test-python.sh')]],
  // Before the first runtime suite: the Python venv, whose moto_server the S3 tests start (a real S3 server).
  'python-env': ['bash', [join(root, 'scripts', 'test-python.sh')], { VLINK_PY_SETUP_ONLY: '1' }],
  browser: ['node', [join(root, 'scripts', 'test-browser.mjs')]],
  packaging: ['node', [join(root, 'scripts', 'test-packaging.mjs')]],
  examples: ['node', [join(root, 'scripts', 'test-examples.mjs')]],
  install: ['node', [join(root, 'scripts', 'test-install.mjs')]],
  // A smoke run of every benchmark: checks the harness works; its numbers mean nothing and are not kept.
  bench: ['node', [join(root, 'bench', 'run.mjs'), '--smoke', '--runtimes', 'node']],
};
const scriptOf = {
  bench: '../bench/run.mjs',
  coverage: 'check-coverage.mjs',
  cycles: 'check-cycles.mjs',
  'frame-path': 'frame-path.mjs',
  packaging: 'test-packaging.mjs',
  examples: 'test-examples.mjs',
  python: 'test-python.sh',
  'python-env': 'test-python.sh',
  browser: 'test-browser.mjs',
  install: 'test-install.mjs',
};

// The watchdog of a test that blocked its thread writes its name here too: Deno holds a test's output until the
// test ends, so a killed Deno run would otherwise not say which test it was.
const watchdogDir = mkdtempSync(join(tmpdir(), 'vlink-watchdog-'));
const failed = [];
/** [stage, lines]: each failed laned stage's failing tests, printed again at the very end (scripts/failure-digest.mjs). */
const digests = [];
// The node run's coverage is checked right after it, and the import graph right after the linter.
const suites = ['node', 'bun', 'deno'];
const firstSuite = runtimes.find((r) => suites.includes(r));
const stages = [
  ...(withBuild ? ['build'] : []),
  ...runtimes.flatMap((r) => [
    ...(r === firstSuite && !process.env.VLINK_MOTO_SERVER ? ['python-env'] : []),
    ...(r === 'node' ? ['node', 'coverage'] : r === 'lint' ? ['lint', 'cycles', 'frame-path'] : [r]),
  ]),
];
// With `--build`, the docs site before the examples, which check it (or last).
if (withBuild) stages.splice(stages.includes('examples') ? stages.indexOf('examples') : stages.length, 0, 'docs');
/** Seconds per stage, printed at the end: CI has about 30 minutes on 2 cores, and this says where they go. */
const took = [];

/**
 * PySpark in CI: the Python stage runs the test that reads the export with Spark (local[2]) and fails when Spark
 * cannot run (`VLINK_PY_SPARK=1`). Installing pyspark takes about 30 s (a ~450 MB download; 150 s with pip), so when
 * the venv is made before the suites (the `python-env` stage), the install starts right after it, in the background,
 * while the lanes run; the Python stage, much later in its lane, waits for it (it is long done) and reinstalls only
 * if it failed. Outside CI set VLINK_TEST_SPARK=1 for the same; otherwise the Spark test is a named skip when pyspark
 * is absent.
 */
const ci = !['', '0', 'false', 'no'].includes((process.env.CI ?? '').trim().toLowerCase());
const withSpark = stages.includes('python') && (ci || process.env.VLINK_TEST_SPARK === '1');
if (withSpark) commands.python[2] = { ...commands.python[2], VLINK_PY_SPARK: '1' };
let sparkInstall;

/** Starts the background install of the `spark` extra into the venv; resolves (never rejects) when it ends. */
function startSparkInstall() {
  const log = join(logDir, 'spark-install.log');
  const out = openSync(log, 'w');
  const started = performance.now();
  const child = spawn('bash', [join(root, 'scripts', 'test-python.sh')], {
    stdio: ['ignore', out, out],
    cwd: root,
    env: { ...process.env, VLINK_PY_SPARK_ONLY: '1' },
  });
  return new Promise((done) => {
    const end = (status) => {
      closeSync(out);
      const seconds = (performance.now() - started) / 1000;
      took.push(['(spark)', seconds]);
      console.log(
        `\n=== spark extra installed in the background: ${status === 0 ? 'done' : 'FAILED'} in ${seconds.toFixed(0)} s ===`,
      );
      process.stdout.write(readFileSync(log));
      done();
    };
    child.on('error', () => end(1));
    child.on('close', end);
  });
}

/**
 * Lanes: the stages after the short checks and the venv run in two lanes at once, because each suite keeps about
 * one core busy and CI has two; run one after the other they took 29 minutes. A lane's stage writes to a log file
 * that is printed whole when the stage ends, so the two lanes' output never interleaves. `VLINK_TEST_LANES=1` runs
 * everything in order with the output streamed, as a developer wants it locally. The split evens the lanes by the
 * stage times printed at the end of every run: the Node suite (under coverage, the longest stage) with the packaging,
 * install, docs, examples and browser stages; Bun, Deno, Python and the benchmarks' smoke run in the other. A fresh
 * clone on 2 cores (2026-12-06) took 1,489 and 1,499 s in them (1,500 s of wall time). A third lane for the install
 * test and the benchmarks' smoke run, which partly wait, gained nothing (1,503 s): they took 280 s instead of 217, and
 * slowed the suites beside them by as much (Node 1,254 → 1,372 s, Bun 414 → 484, Deno 772 → 833).
 */
const lanes = Math.max(1, Number(process.env.VLINK_TEST_LANES ?? 2));
const laneOf = {
  node: 0,
  coverage: 0,
  packaging: 0,
  install: 0,
  docs: 0,
  examples: 0,
  browser: 0,
  bun: 1,
  deno: 1,
  python: 1,
  bench: 1,
};
const logDir = mkdtempSync(join(tmpdir(), 'vlink-test-logs-'));
// The S3 read cache of every stage (tests that do not pick one would fill `<tmpdir>/vlink-s3-cache`), removed at the end.
const s3CacheDir = mkdtempSync(join(tmpdir(), 'vlink-test-s3-cache-'));

/**
 * Free disk space of the temporary folder, watched through the run: the suites write bags of up to a few hundred MiB
 * at once in both lanes, and a disk that fills up fails them in ways that look like bugs (a native build that npm
 * drops as a failed optional dependency, a short write). The lowest value seen is printed with the stage times, and
 * a failed stage says when the disk was nearly full during it.
 */
const GiB = 1024 ** 3;
const freeBytes = () => {
  const fs = statfsSync(tmpdir());
  return fs.bavail * fs.bsize;
};
const disk = { lowest: freeBytes(), start: freeBytes() };
const LOW_DISK = 2 * GiB;
console.log(`free disk in ${tmpdir()}: ${(disk.start / GiB).toFixed(1)} GiB`);
if (disk.start < 10 * GiB)
  console.log(`warning: under 10 GiB free in ${tmpdir()}; the suites may fail for want of space, not for a bug`);
const diskWatch = setInterval(() => {
  disk.lowest = Math.min(disk.lowest, freeBytes());
}, 2000);
diskWatch.unref();

async function runStage(runtime, streamed) {
  // The Python stage needs the background pyspark install finished (a failed one is retried by the stage itself).
  if (runtime === 'python' && sparkInstall) await sparkInstall;
  const command = commands[runtime];
  if (!command) throw new Error(`unknown runtime ${runtime}`);
  if (scriptOf[runtime] && !existsSync(join(root, 'scripts', scriptOf[runtime])))
    throw new Error(`scripts/${scriptOf[runtime]} is missing`);
  const what = suites.includes(runtime)
    ? `${testFiles.length} test files`
    : (scriptOf[runtime] ?? [command[0], ...command[1]].map((part) => relative(root, part) || part).join(' '));
  const title = `\n=== ${runtime}: ${what} ===`;
  const log = join(logDir, `${runtime}.log`);
  const started = performance.now();
  if (streamed) console.log(title);
  const out = streamed ? 'inherit' : openSync(log, 'w');
  const child = spawn(command[0], command[1], {
    stdio: ['ignore', out, out],
    cwd: root,
    env: {
      ...process.env,
      ...command[2],
      VLINK_S3_CACHE_DIR: process.env.VLINK_S3_CACHE_DIR ?? s3CacheDir,
      VLINK_TEST_RUNTIME: runtime,
      VLINK_TEST_WATCHDOG_LOG: join(watchdogDir, runtime),
    },
  });
  return new Promise((done) => {
    child.on('close', (status) => {
      if (!streamed) {
        closeSync(out);
        console.log(title);
        const text = readFileSync(log, 'utf8');
        process.stdout.write(text);
        if (status !== 0) digests.push([runtime, failureDigest(runtime, text)]);
      }
      if (existsSync(join(watchdogDir, runtime))) console.error(readFileSync(join(watchdogDir, runtime), 'utf8'));
      const seconds = (performance.now() - started) / 1000;
      if (!streamed)
        console.log(`=== ${runtime}: ${status === 0 ? 'passed' : 'FAILED'} in ${seconds.toFixed(0)} s ===`);
      if (status !== 0) failed.push(runtime === 'coverage' ? 'node (coverage)' : runtime);
      if (status !== 0 && disk.lowest < LOW_DISK)
        console.log(
          `=== ${runtime}: note: free disk in ${tmpdir()} fell to ${(disk.lowest / GiB).toFixed(2)} GiB during the run ===`,
        );
      took.push([runtime, seconds]);
      done();
    });
  });
}

const serial = lanes === 1 ? stages : stages.filter((s) => laneOf[s] === undefined);
const laned = lanes === 1 ? [] : stages.filter((s) => laneOf[s] !== undefined);
/**
 * The build and the Python venv at once: the venv (a uv install, mostly downloads) needs nothing the build makes, and
 * the build, a chain of TypeScript compilations, leaves one of the two cores idle most of its time; one after the
 * other they took about 90 s more. The venv's output is printed when it ends, its time shown in brackets (not added
 * to the serial total).
 */
let venvBesideBuild;
for (const stage of serial) {
  if (stage === 'python-env' && venvBesideBuild) {
    const waited = performance.now();
    await venvBesideBuild;
    const entry = took.find(([name]) => name === 'python-env');
    if (entry) entry[0] = '(python-env)';
    took.push(['venv wait', (performance.now() - waited) / 1000]);
  } else if (stage === 'build') {
    if (serial.includes('python-env')) venvBesideBuild = runStage('python-env', false);
    await runStage(stage, true);
    if (failed.includes('build')) break;
    testFiles = findTestFiles();
    Object.assign(commands, suiteCommands(testFiles));
  } else await runStage(stage, true);
  if (stage === 'python-env' && withSpark && !failed.includes('python-env')) sparkInstall = startSparkInstall();
}
if (failed.includes('build')) {
  await venvBesideBuild;
  console.error('\nFailed: build (nothing tested)');
  process.exit(1);
}
if (laned.length > 0) {
  const started = performance.now();
  console.log(`\n=== ${laned.join(', ')} in ${lanes} lanes; each stage's output is printed when it ends ===`);
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (const stage of laned.filter((s) => laneOf[s] % lanes === lane)) await runStage(stage, false);
    }),
  );
  took.push(['(lanes wall)', (performance.now() - started) / 1000]);
}
clearInterval(diskWatch);
disk.lowest = Math.min(disk.lowest, freeBytes());
rmSync(watchdogDir, { recursive: true, force: true });
rmSync(logDir, { recursive: true, force: true });
rmSync(s3CacheDir, { recursive: true, force: true });
if (took.length > 1) {
  console.log('\nStage times:');
  for (const [stage, s] of took) console.log(`  ${stage.padEnd(12)} ${s.toFixed(0).padStart(5)} s`);
  const wall = took.find(([stage]) => stage === '(lanes wall)');
  // '(lanes wall)' and '(spark)' (in the background, during the lanes) are not serial stages.
  const serialSeconds = took.filter(([stage]) => laneOf[stage] === undefined && !stage.startsWith('('));
  console.log(
    `  ${'total'.padEnd(12)} ${[...serialSeconds, ...(wall ? [wall] : took.filter(([st]) => laneOf[st] !== undefined))]
      .reduce((n, [, s]) => n + s, 0)
      .toFixed(0)
      .padStart(5)} s (wall)`,
  );
  console.log(
    `  free disk: ${(disk.start / GiB).toFixed(1)} GiB at the start, lowest ${(disk.lowest / GiB).toFixed(1)} GiB (${((disk.start - disk.lowest) / GiB).toFixed(1)} GiB used at the peak)`,
  );
}
for (const [stage, lines] of digests)
  console.error(`\n=== ${stage}: what failed (again, from its output above) ===\n${lines.join('\n')}`);
if (failed.length > 0) {
  console.error(`\nFailed runtimes: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`\nAll runtimes passed: ${runtimes.join(', ')}`);
