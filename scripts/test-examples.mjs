#!/usr/bin/env node
// Runs every example in examples/ (compiled from examples/*.ts into examples/dist by examples/tsconfig.json) under
// Node, Bun and Deno, each in its own process with a time limit; an example passes when it exits 0 (each one asserts
// its own result). Also checks the built docs site when apps/docs has been built. Prints "N passed, N failed" and
// exits 1 on any failure.
//
// Usage: node scripts/test-examples.mjs [node|bun|deno ...] [example names ...] [--no-compile]
// Needs `npm run build` first (the examples import the built @vlink/* packages, as users would).
// An example that cannot run on some runtime says so in a first-lines comment: `// runtimes: node bun`.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const examplesDir = join(root, 'examples');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const TIMEOUT_MS = 120_000;
const RUNTIMES = {
  node: { command: process.execPath, args: (file) => [file], available: () => true },
  bun: { command: bin('bun'), args: (file) => [file], available: () => existsSync(bin('bun')) },
  // --node-modules-dir=manual: resolve @vlink/* from the workspace's node_modules, as the test suite does.
  deno: {
    command: bin('deno'),
    args: (file) => ['run', '-A', '--no-check', '--node-modules-dir=manual', file],
    available: () => existsSync(bin('deno')),
  },
};

const argv = process.argv.slice(2);
const compile = !argv.includes('--no-compile');
const wantedRuntimes = argv.filter((a) => a in RUNTIMES);
const wantedExamples = argv.filter((a) => !a.startsWith('--') && !(a in RUNTIMES));
const runtimes = wantedRuntimes.length > 0 ? wantedRuntimes : Object.keys(RUNTIMES);

if (
  !existsSync(join(root, 'packages/bag/dist/index.js')) ||
  !existsSync(join(root, 'packages/http-api/dist/index.js'))
) {
  console.error('test-examples: the packages are not built; run `npm run build` first');
  process.exit(1);
}
if (compile) {
  const tsc = spawnSync(bin('tsc'), ['-p', join(examplesDir, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
  if (tsc.status !== 0) {
    console.error('test-examples: examples do not compile (tsc -p examples)');
    process.exit(1);
  }
}

const examples = readdirSync(examplesDir)
  .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
  .map((f) => f.slice(0, -3))
  .filter((name) => wantedExamples.length === 0 || wantedExamples.includes(name))
  .sort();
if (examples.length === 0) {
  console.error(`test-examples: no example matches ${wantedExamples.join(', ')}`);
  process.exit(1);
}

/** `// runtimes: node bun` in the first lines restricts an example; default every runtime. */
function runtimesOf(name) {
  const head = readFileSync(join(examplesDir, `${name}.ts`), 'utf8')
    .split('\n')
    .slice(0, 10)
    .join('\n');
  const declared = /^\/\/ runtimes: (.+)$/m
    .exec(head)?.[1]
    .split(/[\s,]+/)
    .filter(Boolean);
  return declared ?? Object.keys(RUNTIMES);
}

function run(command, args) {
  return new Promise((done) => {
    const started = performance.now();
    let output = '';
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => {
      output += `\n[killed after ${TIMEOUT_MS / 1000} s]`;
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    child.on('error', (error) => (output += `\n${error.message}`));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ ok: code === 0, code: code ?? signal, output, ms: performance.now() - started });
    });
  });
}

const results = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
function report(label, result) {
  if (result.ok) results.passed++;
  else {
    results.failed++;
    failures.push(label);
  }
  console.log(`${result.ok ? 'PASS' : 'FAIL'}  ${label.padEnd(28)} ${(result.ms / 1000).toFixed(1).padStart(5)} s`);
  if (!result.ok)
    console.log(
      `${result.output
        .trimEnd()
        .split('\n')
        .slice(-30)
        .map((l) => `      ${l}`)
        .join('\n')}\n      (exit ${result.code})`,
    );
}

for (const runtime of runtimes) {
  if (!RUNTIMES[runtime].available()) {
    console.log(`SKIP  ${runtime}: not installed (${RUNTIMES[runtime].command})`);
    results.skipped += examples.length;
    continue;
  }
  for (const name of examples) {
    const label = `${runtime} ${name}`;
    if (!runtimesOf(name).includes(runtime)) {
      console.log(`SKIP  ${label.padEnd(28)} (the example declares it does not run here)`);
      results.skipped++;
      continue;
    }
    const file = join(examplesDir, 'dist', `${name}.js`);
    report(label, await run(RUNTIMES[runtime].command, RUNTIMES[runtime].args(file)));
  }
}

// The docs site, when it has been built (apps/docs: `npm run build` builds it after the packages).
const siteCheck = join(root, 'apps/docs/scripts/check-site.mjs');
if (wantedExamples.length === 0 && wantedRuntimes.length === 0) {
  if (existsSync(join(root, 'apps/docs/.vitepress/dist/index.html')) && existsSync(siteCheck)) {
    report('docs site', await run(process.execPath, [siteCheck]));
  } else {
    console.log('SKIP  docs site                    (apps/docs not built)');
    results.skipped++;
  }
}

console.log(
  `\n${results.passed} passed, ${results.failed} failed${results.skipped ? `, ${results.skipped} skipped` : ''}`,
);
if (failures.length > 0) {
  console.log(`failed: ${failures.join(', ')}`);
  process.exit(1);
}
