import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { registeredExtensions } from '@vlink/bag';
import { FUZZ_FORMATS, type FuzzFormat } from './fuzz.js';
import { runFuzz, type FuzzSummary } from './fuzz-runner.js';
import { currentRuntime } from './runtime.js';

// Mutated recordings of every format (seeded, reproducible by seed and case index) must only ever fail with a typed
// BagError: no other exception, no hang (5 s per case), no crash, no huge allocation; a .vcap repaired by fix() must
// pass check(). 10,000 cases per format: packages/testing/scripts/fuzz-long.mjs.

const CASES = Number(process.env['VLINK_FUZZ_CASES'] ?? 200);
const SEED = Number(process.env['VLINK_FUZZ_SEED'] ?? 20260317);

// `foreign`: the fixtures of the read-only formats (MCAP, ROS 1, rosbag2, Apollo, ULog), half as many cases each
// (small files, one reader each: fewer structures to reach).
const formats = FUZZ_FORMATS.filter((f) => registeredExtensions().includes(f === 'foreign' ? '.bag' : f));
const casesOf = (format: FuzzFormat) => (format === 'foreign' ? Math.ceil(CASES / 2) : CASES);
// Each format runs in child processes; two at a time keep both cores of a CI machine busy.
const runs = new Map<FuzzFormat, Promise<FuzzSummary>>();
const chain: Array<Promise<unknown>> = [Promise.resolve(), Promise.resolve()];
formats.forEach((format, i) => {
  const run = chain[i % 2]!.then(() => runFuzz({ format, seed: SEED, cases: casesOf(format) }));
  chain[i % 2] = run.catch(() => undefined);
  runs.set(format, run);
});

describe(`fuzzed inputs (${currentRuntime()})`, () => {
  for (const format of formats) {
    test(`${format}: ${casesOf(format)} mutated files, only BagErrors`, async () => {
      const summary = await runs.get(format)!;
      const report = summary.findings.map(
        (f) =>
          `case ${f.index} (seed ${SEED}, ${f.base ?? ''} ${f.target ?? ''}: ${f.mutation ?? ''}): ${f.kind}: ${f.detail.split('\n')[0]}`,
      );
      assert.deepEqual(report, [], `${format}: ${summary.findings.length} findings in ${casesOf(format)} cases`);
      assert.ok(summary.opened > 0, 'some mutated files still open');
    });
  }
});
