import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from '@vlink/fixtures/test';
import { sampleFrames } from '@vlink/bag-core/testing';
import { BagReader } from './index.js';

// A frame pushed on Node, Bun or Deno must come back byte-identical in every runtime: each runtime writes the same
// sample with its own SQLite driver / file I/O, and the runtime running this test reads all of them.
const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '../../..');
const script = join(here, 'testing', 'write-sample.js');
const writers: Record<string, string[]> = {
  node: ['node', script],
  bun: [join(repoRoot, 'node_modules', '.bin', 'bun'), script],
  deno: [
    join(repoRoot, 'node_modules', '.bin', 'deno'),
    'run',
    '-A',
    '--no-check',
    '--node-modules-dir=manual',
    script,
  ],
};
const dir = mkdtempSync(join(tmpdir(), 'vlink-xrt-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const expected = sampleFrames();

describe('cross-runtime byte identity', () => {
  for (const [runtime, [bin, ...args]] of Object.entries(writers)) {
    for (const ext of ['.vdb', '.vcap']) {
      test(`${runtime} writes ${ext}, this runtime reads it back byte-identically`, async () => {
        if (bin !== 'node' && !existsSync(bin!)) throw new Error(`${bin} missing: run npm ci`);
        const out = join(dir, `${runtime}${ext}`);
        const compress = ext === '.vdb' ? 'lzav' : 'zstd';
        const run = spawnSync(bin!, [...args, out, compress], { encoding: 'utf8', cwd: repoRoot, timeout: 60_000 });
        assert.equal(run.status, 0, `${runtime} writer failed: ${run.stderr}`);
        const reader = await BagReader.create(out);
        try {
          let i = 0;
          for await (const frame of reader.frames()) {
            const want = expected[i++]!;
            assert.equal(frame.timestamp, want.timestamp);
            assert.equal(frame.url, want.url);
            assert.equal(frame.actionType, want.actionType);
            assert.deepEqual(frame.data, want.data, `payload #${i - 1}`);
          }
          assert.equal(i, expected.length);
          assert.equal(reader.getInfo().hasCompleted, true);
        } finally {
          reader.close();
        }
      });
    }
  }
});
