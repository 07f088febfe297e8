#!/usr/bin/env node
// Long kill -9 run: for every format, a child records at full speed and is killed with SIGKILL at a random moment,
// --runs times (default 25), alternating durable pushes every 64 frames and pure cacheSize commits, in sync mode and
// worker mode (--worker-runs); each bag is then checked as in packages/testing/src/crash/kill9.test.ts. Build first.
//
//   node packages/testing/scripts/kill9-long.mjs [--runs 25] [--format .vdb] [--max-delay 2000] [--cache 1048576] [--worker-runs 10] [--compress zstd]
//   bun packages/testing/scripts/kill9-long.mjs       # children run with the same runtime as the script
//
// Prints one line per format and mode (runs, frames read, the largest loss seen against the bound, time) and every
// violation; exits 1 when there are violations.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { registeredExtensions } from '@vlink/bag';
import { allowedLoss, killRun } from '../dist-test/crash/kill9.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '25' },
    'worker-runs': { type: 'string', default: '10' },
    format: { type: 'string', multiple: true },
    'max-delay': { type: 'string', default: '2000' },
    cache: { type: 'string', default: String(1024 * 1024) },
    split: { type: 'string', default: String(4 * 1024 * 1024) },
    compress: { type: 'string', default: 'none' },
  },
});
const formats = (values.format ?? ['.vdb', '.vcap', '.vdbx', '.vcapx']).filter((f) =>
  registeredExtensions().includes(f),
);
const dir = mkdtempSync(join(tmpdir(), 'vlink-kill9-long-'));
const cacheSize = Number(values.cache);
const splitBySize = Number(values.split);
const compress = values.compress === 'zstd' ? 'zstd' : 'none';
let violations = 0;
try {
  for (const ext of formats) {
    for (const mode of ['sync', 'worker']) {
      const runs = Number(mode === 'sync' ? values.runs : values['worker-runs']);
      const started = performance.now();
      let read = 0;
      let worst = 0;
      let repaired = 0;
      for (let i = 0; i < runs; i++) {
        const delayMs = 20 + Math.floor(Math.random() * Number(values['max-delay']));
        const durableEvery = i % 2 === 0 ? 64 : 0;
        const r = await killRun({
          ext,
          mode,
          dir: join(dir, `${ext.slice(1)}-${mode}-${i}`),
          delayMs,
          cacheSize,
          durableEvery,
          splitBySize,
          compress,
        });
        read += r.read;
        worst = Math.max(worst, r.lostBytes);
        if (r.repaired) repaired++;
        for (const v of r.violations) {
          violations++;
          console.log(
            `  VIOLATION (kill after ${delayMs} ms, durable every ${durableEvery}; written ${r.written}, committed ${r.committed}, read ${r.read}): ${v}`,
          );
        }
      }
      const bound = allowedLoss({ ext, mode, cacheSize, compress });
      console.log(
        `${ext} ${mode}: ${runs} kills in ${((performance.now() - started) / 1000).toFixed(1)} s, ${read} frames read back, ` +
          `largest loss ${worst} B of frames reported written (bound ${bound} B), ${repaired}/${runs} repaired by fix() and passing check()`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(violations > 0 ? 1 : 0);
