import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { workerExecArgv } from './exec-argv.js';

describe('workerExecArgv', () => {
  test('drops the flags that describe the parent script, keeps module loading flags', () => {
    assert.deepEqual(
      workerExecArgv([
        '--input-type=module',
        '--eval',
        'code',
        '-p',
        '--test',
        '--watch',
        '--inspect=9229',
        '--import',
        'tsx',
        '--import=./hooks.mjs',
        '-r',
        'dotenv/config',
        '--conditions=development',
        '--experimental-strip-types',
        '--no-experimental-global-navigator',
        '--enable-source-maps',
        '--no-warnings',
        '--max-old-space-size=64',
        '--expose-gc',
        '--stack-trace-limit=50',
        '--harmony',
      ]),
      [
        '--import',
        'tsx',
        '--import=./hooks.mjs',
        '-r',
        'dotenv/config',
        '--conditions=development',
        '--experimental-strip-types',
        '--no-experimental-global-navigator',
        '--enable-source-maps',
        '--no-warnings',
      ],
    );
    assert.deepEqual(workerExecArgv([]), []);
    assert.deepEqual(workerExecArgv(['--import']), [], 'a flag missing its value is dropped');
  });

  // Node refuses per-process flags in a Worker's execArgv, and the whole worker with them: every flag kept must start
  // one (a process started with `node --expose-gc` once failed its first bag worker this way).
  const onNode =
    typeof (globalThis as { Bun?: unknown }).Bun === 'undefined' &&
    typeof (globalThis as { Deno?: unknown }).Deno === 'undefined';
  test('every flag it keeps starts a Node worker', {
    skip: onNode ? false : 'Node only: other runtimes ignore execArgv',
  }, async () => {
    const { Worker } = await import('node:worker_threads');
    const kept = workerExecArgv([
      '--no-warnings',
      '--no-deprecation',
      '--trace-warnings',
      '--trace-uncaught',
      '--enable-source-maps',
      '--preserve-symlinks',
      '--preserve-symlinks-main',
      '--unhandled-rejections=strict',
      '--disable-warning=DEP0040',
      '--conditions=development',
      '--experimental-vm-modules',
      '--expose-gc',
      '--stack-trace-limit=50',
      '--harmony',
    ]);
    assert.ok(kept.length >= 11, `kept ${kept.join(' ')}`);
    assert.ok(!kept.includes('--expose-gc'));
    for (const flag of kept) {
      const worker = new Worker('0', { eval: true, execArgv: [flag] });
      assert.equal(await new Promise((resolve) => worker.once('exit', resolve)), 0, flag);
    }
  });

  // `node --cpu-prof` should profile the writer worker too: a worker given the flags writes a profile of its own.
  test('passes the profilers on, and a worker started with them writes its profile', {
    skip: onNode ? false : 'Node only: other runtimes ignore execArgv',
  }, async () => {
    const { mkdtempSync, readdirSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = mkdtempSync(join(tmpdir(), 'vlink-cpu-prof-'));
    try {
      const kept = workerExecArgv(['--cpu-prof', '--cpu-prof-dir', dir, '--heap-prof-dir=/x', '--heap-prof']);
      assert.deepEqual(kept, ['--cpu-prof', '--cpu-prof-dir', dir, '--heap-prof-dir=/x', '--heap-prof']);
      const { Worker } = await import('node:worker_threads');
      const worker = new Worker('0', { eval: true, execArgv: kept.slice(0, 3) });
      assert.equal(await new Promise((resolve) => worker.once('exit', resolve)), 0);
      assert.equal(readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
