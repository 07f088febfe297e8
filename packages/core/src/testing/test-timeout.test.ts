import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fixturePath } from '@vlink/fixtures';
import { describe, test } from '@vlink/fixtures/test';
import { repoRoot, runTestFile } from './test-file.test.helper.js';

// Spelled so that this file does not match itself.
const DIRECT_IMPORT = new RegExp(`from '${'node'}:test'`);
const fixture = fixturePath('test', 'hanging.fixture.test.js');

function runHanging(mode: 'async' | 'sync') {
  const started = Date.now();
  const dir = mkdtempSync(join(tmpdir(), 'vlink-hang-'));
  const log = join(dir, 'watchdog.log');
  try {
    const run = runTestFile(fixture, {
      VLINK_HANG: mode,
      VLINK_TEST_TIMEOUT_MS: '1000',
      VLINK_TEST_WATCHDOG_LOG: log,
    });
    const logged = existsSync(log) ? readFileSync(log, 'utf8') : '';
    return { ...run, output: `${run.stdout}\n${run.stderr}`, logged, elapsed: Date.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('every test has a timeout and none can hang the run', () => {
  test('a test awaiting forever fails by its timeout, named in the output', () => {
    const run = runHanging('async');
    assert.equal(run.error, undefined, 'the child finished by itself');
    assert.notEqual(run.status, 0, run.output);
    assert.match(run.output, /awaits a promise that never settles/);
    assert.match(run.output, /timed out after 1000 ?ms/);
    assert.ok(run.elapsed < 30_000, `took ${run.elapsed} ms`);
  });

  test('a test spinning synchronously is killed by the watchdog, which names it', () => {
    const run = runHanging('sync');
    assert.equal(run.error, undefined, 'the child finished by itself');
    assert.notEqual(run.status, 0, run.output);
    const named = /TEST TIMEOUT: "hanging fixture > spins in a loop that never advances"/;
    assert.match(run.logged, named, 'the log scripts/test-all.mjs prints');
    // Deno may lose a killed test's captured output; Node and Bun pass the watchdog's line through.
    if (!('Deno' in globalThis)) assert.match(run.output, named);
    assert.ok(run.elapsed < 30_000, `took ${run.elapsed} ms`);
  });

  test('every test file takes describe/test/it from the wrapper, so every test gets the timeout', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir)) {
        const path = join(dir, entry);
        if (entry === 'node_modules' || entry === 'dist') continue;
        if (statSync(path).isDirectory()) walk(path);
        else if (entry.endsWith('.test.ts') && DIRECT_IMPORT.test(readFileSync(path, 'utf8')))
          offenders.push(relative(repoRoot, path));
      }
    };
    for (const pkg of readdirSync(join(repoRoot, 'packages'))) walk(join(repoRoot, 'packages', pkg, 'src'));
    assert.deepEqual(offenders, [], "import from '@vlink/fixtures/test' instead of 'node:test'");
  });
});
