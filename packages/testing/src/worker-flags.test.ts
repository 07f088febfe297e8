import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader } from '@vlink/bag';
import { s3TestServer } from '@vlink/fixtures/s3';
import { currentRuntime, repoRoot } from './crash/runtime.js';

// The threads we start must not depend on how the process was started: a script piped to `node --input-type=module
// -`, a process with `--import` hooks, `bun -e`, `deno eval`. Each runtime tests its own ways of starting: the writer
// worker, a helper thread (the zstd compressor's), and the S3 range helper.
const dir = mkdtempSync(join(tmpdir(), 'vlink-worker-flags-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const distModule = (pkg: string, ...path: string[]) => pathToFileURL(join(repoRoot, 'packages', pkg, ...path)).href;
const bagModule = distModule('bag', 'dist', 'index.js');
const { skip: s3Skip, options: s3Options } = await s3TestServer();

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

/** Runs `code` started the way `way` says; its last line of output, parsed as JSON. */
function runAs(way: (typeof ways)[string][number], code: string, out: string): unknown {
  const run = spawnSync(process.execPath, way.args(code, out), {
    input: way.stdin ? code : '',
    encoding: 'utf8',
    cwd: repoRoot,
    timeout: 60_000,
  });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout.trim().split('\n').at(-1)!);
}

/**
 * Starts a helper thread (the zstd compressor's kind, with a test helper that does each piece of work it is handed)
 * and hands it one: a helper whose module failed to load would never take it (the writer waits 30 s, then fails).
 */
function helperScript(): string {
  const helper = distModule('core', 'dist-test', 'runtime', 'slow-start-thread.test.helper.js');
  return `
    const { HelperThread } = await import(${JSON.stringify(distModule('core', 'dist', 'internal.js'))});
    const { createThreadControl } = await import(${JSON.stringify(distModule('core', 'dist', 'runtime', 'thread-control.js'))});
    const { shared, control } = createThreadControl();
    const thread = new HelperThread({
      module: new URL(${JSON.stringify(helper)}),
      control,
      workerData: { control: shared, startMs: 0 },
      failure: (message) => new Error(message),
    });
    thread.handOver(1);
    thread.waitFor((tail) => tail === 1);
    thread.stop();
    console.log(JSON.stringify({ done: thread.done }));
  `;
}

/** Puts an object on the test's S3 server, then reads some of it back synchronously (through the range helper). */
function s3Script(options: object, key: string): string {
  return `
    const { S3ByteSource, S3Client, parseS3Url } = await import(${JSON.stringify(distModule('storage-s3', 'dist', 'index.js'))});
    const options = ${JSON.stringify(options)};
    const client = new S3Client(options);
    await client.createBucket('flags').catch(() => undefined);
    const bytes = Uint8Array.from({ length: 300000 }, (_, i) => (i * 7) & 0xff);
    await client.put(parseS3Url('s3://flags/${key}'), bytes);
    const source = S3ByteSource.openSync('s3://flags/${key}', options);
    const read = source.read(1000, 5000);
    source.close();
    console.log(JSON.stringify({ size: read.length, same: read.every((b, i) => b === bytes[1000 + i]) }));
  `;
}

describe('the writer worker, however the process was started', () => {
  writeFileSync(join(dir, 'hooks.mjs'), 'globalThis.__hooksLoaded = true;\n');
  for (const way of ways[currentRuntime()]!) {
    test(way.name, async () => {
      const out = join(dir, `${way.name.replace(/\W+/g, '_')}.vcap`);
      const result = runAs(way, script(out), out);
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

describe('a helper thread (the zstd compressor), however the process was started', () => {
  for (const way of ways[currentRuntime()]!) {
    test(way.name, () => {
      assert.deepEqual(runAs(way, helperScript(), ''), { done: 1 });
    });
  }
});

describe('the S3 range helper, however the process was started', { skip: s3Skip }, () => {
  for (const [i, way] of ways[currentRuntime()]!.entries()) {
    test(way.name, () => {
      const options = s3Options({ cacheDir: join(dir, `s3-cache-${i}`) });
      assert.deepEqual(runAs(way, s3Script(options, `object-${i}.bin`), ''), { size: 5000, same: true });
    });
  }
});
