import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader } from '@vlink/bag';
import { currentRuntime, repoRoot } from './crash/runtime.js';

// A worker-mode BagWriter must not depend on how its process was started: a script piped to `node --input-type=module
// -`, a process with `--import` hooks, `bun -e`, `deno eval`. Each runtime tests its own ways of starting.
const dir = mkdtempSync(join(tmpdir(), 'vlink-worker-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const bagModule = pathToFileURL(join(repoRoot, 'packages', 'bag', 'dist', 'index.js')).href;

/** Records 500 frames in worker mode and prints the writer's mode and stats as JSON. */
function script(out: string): string {
  return `
    const { BagWriter } = await import(${JSON.stringify(bagModule)});
    const writer = await BagWriter.create(${JSON.stringify(out)});
    for (let i = 0; i < 500; i++)
      writer.push({ timestamp: i * 1000, url: '/x', data: new Uint8Array([i & 0xff, 1, 2]), serType: 'raw', schemaType: 3, actionType: 5 });
    await writer.close();
    const s = writer.stats();
    console.log(JSON.stringify({ mode: s.mode, written: s.writtenFrames, error: s.lastError?.message ?? null }));
  `;
}

const ways: Record<string, Array<{ name: string; args: (code: string, out: string) => string[]; stdin?: boolean }>> = {
  node: [
    { name: 'node --input-type=module -', args: () => ['--input-type=module', '-'], stdin: true },
    { name: 'node --input-type=module -e', args: (code) => ['--input-type=module', '-e', code] },
    // Per-process V8 flags that Node refuses in a Worker's execArgv.
    {
      name: 'node --expose-gc --stack-trace-limit=50 --input-type=module -',
      args: () => ['--expose-gc', '--stack-trace-limit=50', '--input-type=module', '-'],
      stdin: true,
    },
    {
      name: 'node --import <hooks> --input-type=module -',
      args: () => ['--import', pathToFileURL(join(dir, 'hooks.mjs')).href, '--input-type=module', '-'],
      stdin: true,
    },
  ],
  bun: [{ name: 'bun -e', args: (code) => ['-e', code] }],
  deno: [{ name: 'deno eval', args: (code) => ['eval', code] }],
};

describe('the writer worker, however the process was started', () => {
  writeFileSync(join(dir, 'hooks.mjs'), 'globalThis.__hooksLoaded = true;\n');
  for (const way of ways[currentRuntime()]!) {
    test(way.name, async () => {
      const out = join(dir, `${way.name.replace(/\W+/g, '_')}.vcap`);
      const code = script(out);
      const run = spawnSync(process.execPath, way.args(code, out), {
        input: way.stdin ? code : '',
        encoding: 'utf8',
        cwd: repoRoot,
        timeout: 60_000,
      });
      assert.equal(run.status, 0, run.stderr);
      const result = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as {
        mode: string;
        written: number;
        error: string | null;
      };
      assert.deepEqual(result, { mode: 'worker', written: 500, error: null });
      const reader = await BagReader.create(out);
      try {
        assert.equal(reader.getInfo().messageCount, 500);
      } finally {
        reader.close();
      }
    });
  }
});
