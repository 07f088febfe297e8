import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { createFrame } from '../model/frame.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import type { SignalAdapter, TerminateSignal } from '../runtime/signals.js';
import { BagWriter } from './bag-writer.js';
import { registerTerminateSignal } from './terminate-signal.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-signal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function fakeAdapter() {
  const handlers = new Map<TerminateSignal, () => void>();
  let exited: (code: number) => void = () => {};
  const exitCode = new Promise<number>((resolve) => (exited = resolve));
  const adapter: SignalAdapter = {
    listen(signal, handler) {
      handlers.set(signal, handler);
      return () => handlers.delete(signal);
    },
    exit: (code) => exited(code),
  };
  return { adapter, handlers, exitCode };
}

async function complete(path: string): Promise<[boolean, number]> {
  const reader = await BagReader.create(path);
  const info = reader.getInfo();
  reader.close();
  return [info.hasCompleted, info.messageCount];
}

describe('registerTerminateSignal', () => {
  test('on a signal: closes the writers (drained, complete), then exits with 128 + signal', async () => {
    const path = join(dir, 'a.memjson');
    const writer = await BagWriter.create(path);
    const { adapter, handlers, exitCode } = fakeAdapter();
    const unregister = registerTerminateSignal([writer], { adapter });
    assert.deepEqual([...handlers.keys()].sort(), ['SIGINT', 'SIGTERM']);
    for (let i = 0; i < 100; i++) writer.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(16) }));
    handlers.get('SIGTERM')!();
    assert.equal(await exitCode, 143);
    assert.deepEqual(await complete(path), [true, 100]);
    unregister();
    assert.equal(handlers.size, 0);
  });

  test('a callback runs instead of a writer list', async () => {
    const { adapter, handlers, exitCode } = fakeAdapter();
    let called = 0;
    registerTerminateSignal(() => called++, { adapter, signals: ['SIGINT'] });
    handlers.get('SIGINT')!();
    assert.equal(await exitCode, 130);
    assert.equal(called, 1);
  });

  test('a real SIGTERM to a child process running this runtime finishes its recording', async () => {
    const path = join(dir, 'child.memjson');
    const script = join(dir, 'child.mjs');
    writeFileSync(
      script,
      [
        `import { BagWriter, registerBackend, registerTerminateSignal, createFrame } from ${JSON.stringify(new URL('../index.js', import.meta.url).href)};`,
        `import { memoryBackend } from ${JSON.stringify(new URL('../testing/index.js', import.meta.url).href)};`,
        `registerBackend(memoryBackend);`,
        `const writer = await BagWriter.create(${JSON.stringify(path)});`,
        `registerTerminateSignal(writer);`,
        `for (let i = 0; i < 50; i++) writer.push(createFrame({ timestamp: i, url: 'child', data: new Uint8Array(8) }));`,
        `await writer.pushDurable(createFrame({ timestamp: 50, url: 'child', data: new Uint8Array(8) }));`,
        `console.log('ready');`,
        `setInterval(() => writer.push(createFrame({ url: 'child', data: new Uint8Array(8) })), 5);`,
      ].join('\n'),
    );
    const g = globalThis as { Deno?: unknown };
    const exec = (globalThis as unknown as { process: { execPath: string } }).process.execPath;
    const child = spawn(exec, g.Deno ? ['run', '-A', script] : [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<[number | null, string | null]>((resolve) =>
      child.on('exit', (code, signal) => resolve([code, signal])),
    );
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Uint8Array) => String(chunk).includes('ready') && resolve());
      child.on('exit', () => reject(new Error('child exited before it was ready')));
    });
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    // Deno's child_process reports an exit status above 128 as death by that signal; the complete file below is what
    // tells a clean shutdown from a kill.
    assert.ok(code === 143 || (g.Deno !== undefined && signal === 'SIGTERM'), `exit ${code} ${signal}`);
    const [done, count] = await complete(path);
    assert.equal(done, true, 'the header says complete');
    assert.ok(count >= 51, `all ${count} frames pushed before the signal are in the file`);
  });
});
