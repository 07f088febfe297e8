import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registeredExtensions } from '@vlink/bag';
import { prng } from './fuzz.js';
import { killRun, type CrashFormat, type KillRunOptions } from './kill9.js';
import { currentRuntime } from './runtime.js';

// A child records at full speed and is killed with SIGKILL at a random moment; the bag must open (tryToFix), hold
// exactly a prefix of what was pushed, byte for byte, lose no more than one commit window of what the child reported
// written and nothing it reported committed, and pass check() after fix(). Longer: packages/testing/scripts/kill9-long.mjs.

const RUNS = Number(process.env['VLINK_KILL9_RUNS'] ?? 5);
// The kill delays are random, from a seed printed here: VLINK_KILL9_SEED=<seed> replays the same delays.
const SEED = Number(process.env['VLINK_KILL9_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const random = prng(SEED);
console.log(`kill -9 delays: seed ${SEED} (rerun with VLINK_KILL9_SEED=${SEED})`);
const dir = mkdtempSync(join(tmpdir(), 'vlink-kill9-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const formats = (['.vdb', '.vcap', '.vdbx', '.vcapx'] as CrashFormat[]).filter((ext) =>
  registeredExtensions().includes(ext),
);
let n = 0;

async function runs(
  ext: CrashFormat,
  mode: 'sync' | 'worker',
  count: number,
  io?: { cacheSize: number; compress: 'zstd' },
): Promise<void> {
  const plans: KillRunOptions[] = Array.from({ length: count }, (_, i) => ({
    ext,
    mode,
    dir: join(dir, `${n++}`),
    delayMs: 30 + Math.floor(random() * 300),
    cacheSize: io?.cacheSize ?? 128 * 1024,
    ...(io ? { compress: io.compress } : {}),
    // Alternate: an exact "committed" signal every 64 frames, or only the cacheSize commits.
    durableEvery: i % 2 === 0 ? 64 : 0,
    splitBySize: 256 * 1024,
  }));
  // Two at a time: most of a run is waiting (start-up, the delay), and the machine has two cores.
  for (let i = 0; i < plans.length; i += 2) {
    const results = await Promise.all(plans.slice(i, i + 2).map((plan) => killRun(plan)));
    for (const [k, r] of results.entries()) {
      const plan = plans[i + k]!;
      const what = `seed ${SEED}: ${ext} ${mode} kill after ${plan.delayMs} ms (durable every ${plan.durableEvery}): written ${r.written}, committed ${r.committed}, splits ${r.splits}, read ${r.read}`;
      assert.deepEqual(r.violations, [], what);
      assert.equal(r.repaired, true, `${what}: fix() and check() passed and kept every frame read before`);
    }
  }
}

describe(`kill -9 while recording (${currentRuntime()})`, () => {
  for (const ext of formats) {
    test(`${ext}: ${RUNS} kills, sync mode`, () => runs(ext, 'sync', RUNS));
  }
  for (const ext of formats) {
    test(`${ext}: 2 kills, worker mode`, () => runs(ext, 'worker', 2));
  }
  // zstd chunks of 1 MiB: a .vcap/.vcapx then compresses chunks on a thread of its own while the next ones fill.
  for (const ext of formats.filter((e) => e.startsWith('.vcap'))) {
    test(`${ext}: 2 kills, worker mode with the compressor thread (zstd, cacheSize 1 MiB)`, () =>
      runs(ext, 'worker', 2, { cacheSize: 1024 * 1024, compress: 'zstd' }));
    test(`${ext}: 2 kills, sync mode with the compressor thread (zstd, cacheSize 1 MiB)`, () =>
      runs(ext, 'sync', 2, { cacheSize: 1024 * 1024, compress: 'zstd' }));
  }
});
