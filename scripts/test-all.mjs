#!/usr/bin/env node
// Checks that no tracked file points outside the repository, runs the linter (Biome) and the import-cycle check,
// then the one compiled test suite (packages/*/dist-test/**/*.test.js: each package's test build, beside its product
// build in dist, which holds no test) under Node, Bun and Deno, then the Python client's tests, the examples, the
// browser tests of the web player, the install test of the packed tarballs, and a smoke run of the benchmarks.
// Usage: node scripts/test-all.mjs [repository|lint|node|bun|deno|packaging|python|examples|browser|install|bench ...]   (default: all)
// `node` also checks the coverage of its run (scripts/check-coverage.mjs); `coverage` alone re-checks the last run.
// `lint` also checks the compiled import graph for cycles (scripts/check-cycles.mjs; `cycles` alone runs only that).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const wanted = process.argv.slice(2);
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
const testFiles = packageDirs.flatMap((p) => findTests(join(p, 'dist-test'))).sort();

// Timeouts: every test takes describe/test/it from @vlink/fixtures/test, which gives each test a 120 s timeout that
// all three runtimes honour and kills (naming it) a test that blocks its thread. On top of that, Node bounds each
// file (its --test-timeout is per file on Node 20) and Bun each hook.
// Coverage: the Node run is measured by c8 (V8's own coverage, mapped back to the TypeScript through the source
// maps) and checked against per-package thresholds by scripts/check-coverage.mjs. c8 rather than Node's
// --experimental-test-coverage, which on Node 20 has no thresholds, no include/exclude and no source maps.
const commands = {
  node: [
    bin('c8'),
    [
      '--config',
      join(root, '.c8rc.json'),
      'node',
      '--test',
      '--test-concurrency=1',
      '--test-timeout=900000',
      ...testFiles,
    ],
  ],
  bun: [bin('bun'), ['test', '--timeout=120000', ...testFiles.map((f) => `./${f.slice(root.length + 1)}`)]],
  deno: [bin('deno'), ['test', '-A', '--no-check', '--node-modules-dir=manual', ...testFiles]],
  coverage: ['node', [join(root, 'scripts', 'check-coverage.mjs')]],
  // The linter and formatter (Biome) first: a formatting slip fails in seconds, before the long suites.
  lint: [bin('biome'), ['check', '.']],
  // Part of `lint`: no import cycle inside a package (the compiled import graph, so after the build).
  cycles: ['node', [join(root, 'scripts', 'check-cycles.mjs')]],
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
// The node run's coverage is checked right after it, and the import graph right after the linter.
const suites = ['node', 'bun', 'deno'];
const firstSuite = runtimes.find((r) => suites.includes(r));
const stages = runtimes.flatMap((r) => [
  ...(r === firstSuite && !process.env.VLINK_MOTO_SERVER ? ['python-env'] : []),
  ...(r === 'node' ? ['node', 'coverage'] : r === 'lint' ? ['lint', 'cycles'] : [r]),
]);
/** Seconds per stage, printed at the end: CI has about 30 minutes on 2 cores, and this says where they go. */
const took = [];
for (const runtime of stages) {
  const started = performance.now();
  const command = commands[runtime];
  if (!command) throw new Error(`unknown runtime ${runtime}`);
  if (scriptOf[runtime] && !existsSync(join(root, 'scripts', scriptOf[runtime])))
    throw new Error(`scripts/${scriptOf[runtime]} is missing`);
  console.log(`\n=== ${runtime}: ${scriptOf[runtime] ?? `${testFiles.length} test files`} ===`);
  const result = spawnSync(command[0], command[1], {
    stdio: 'inherit',
    cwd: root,
    env: {
      ...process.env,
      ...command[2],
      VLINK_TEST_RUNTIME: runtime,
      VLINK_TEST_WATCHDOG_LOG: join(watchdogDir, runtime),
    },
  });
  if (existsSync(join(watchdogDir, runtime))) console.error(readFileSync(join(watchdogDir, runtime), 'utf8'));
  if (result.status !== 0) failed.push(runtime === 'coverage' ? 'node (coverage)' : runtime);
  took.push([runtime, (performance.now() - started) / 1000]);
}
rmSync(watchdogDir, { recursive: true, force: true });
if (took.length > 1) {
  console.log('\nStage times:');
  for (const [stage, s] of took) console.log(`  ${stage.padEnd(12)} ${s.toFixed(0).padStart(5)} s`);
  console.log(
    `  ${'total'.padEnd(12)} ${took
      .reduce((n, [, s]) => n + s, 0)
      .toFixed(0)
      .padStart(5)} s`,
  );
}
if (failed.length > 0) {
  console.error(`\nFailed runtimes: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`\nAll runtimes passed: ${runtimes.join(', ')}`);
