#!/usr/bin/env node
// Runs the one compiled test suite (packages/*/dist/**/*.test.js) under Node, Bun and Deno, then the Python tests.
// Usage: node scripts/test-all.mjs [node|bun|deno|python ...]   (default: all)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const bin = (name) => join(root, 'node_modules', '.bin', name);
const wanted = process.argv.slice(2);
const runtimes = wanted.length > 0 ? wanted : ['node', 'bun', 'deno', 'python'];

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
const testFiles = packageDirs.flatMap((p) => findTests(join(p, 'dist'))).sort();

const commands = {
  node: ['node', ['--test', '--test-concurrency=1', ...testFiles]],
  bun: [bin('bun'), ['test', '--timeout=120000', ...testFiles.map((f) => './' + f.slice(root.length + 1))]],
  deno: [bin('deno'), ['test', '-A', '--no-check', '--node-modules-dir=manual', ...testFiles]],
  python: [join(root, 'scripts', 'test-python.sh'), []],
};

let failed = [];
for (const runtime of runtimes) {
  const command = commands[runtime];
  if (!command) throw new Error(`unknown runtime ${runtime}`);
  if (runtime === 'python' && !existsSync(command[0])) continue;
  console.log(`\n=== ${runtime}: ${runtime === 'python' ? 'clients/python' : testFiles.length + ' test files'} ===`);
  const result = spawnSync(command[0], command[1], { stdio: 'inherit', cwd: root, env: { ...process.env, VLINK_TEST_RUNTIME: runtime } });
  if (result.status !== 0) failed.push(runtime);
}
if (failed.length > 0) {
  console.error(`\nFailed runtimes: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`\nAll runtimes passed: ${runtimes.join(', ')}`);
