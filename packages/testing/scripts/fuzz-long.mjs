#!/usr/bin/env node
// Long fuzz run: 10,000 mutated files per format by default, each case in a child process of this runtime under a
// 5 s watchdog (see packages/testing/src/crash/fuzz.ts). Build first (npx turbo run build).
//
//   node packages/testing/scripts/fuzz-long.mjs [--cases 10000] [--seed 1] [--format .vcap] [--start 0] [--timeout 5000]
//   node packages/testing/scripts/fuzz-long.mjs --format .vdb --seed 1 --case 4711 --keep /tmp/case   # replay one case
//
// Runs under Bun too (`bun packages/testing/scripts/fuzz-long.mjs`). Prints one line per format and every finding with
// the seed and case index that reproduce it; exits 1 when there are findings.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { registeredExtensions } from '@vlink/bag';
import { buildBases, FUZZ_FORMATS, makeCase, runCase } from '../dist-test/crash/fuzz.js';
import { runFuzz } from '../dist-test/crash/fuzz-runner.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '1' },
    format: { type: 'string', multiple: true },
    start: { type: 'string', default: '0' },
    timeout: { type: 'string', default: '5000' },
    case: { type: 'string' },
    keep: { type: 'string' },
  },
});
const seed = Number(values.seed);
// `foreign` (the read-only formats' fixtures) runs wherever their backends are registered (`.bag` stands for them).
const formats = (values.format ?? FUZZ_FORMATS).filter((f) =>
  registeredExtensions().includes(f === 'foreign' ? '.bag' : f),
);

if (values.case !== undefined) {
  // Replay one case in this process and keep its files.
  const format = formats[0];
  const dir = values.keep ?? join(process.cwd(), `fuzz-case-${format.replace('.', '')}-${seed}-${values.case}`);
  mkdirSync(dir, { recursive: true });
  const fuzzCase = makeCase(await buildBases(format, join(dir, 'bases')), seed, Number(values.case));
  for (const [name, bytes] of fuzzCase.files) writeFileSync(join(dir, name), bytes);
  console.log(
    `${format} seed ${seed} case ${values.case}: ${fuzzCase.base} ${fuzzCase.target}: ${fuzzCase.mutation}\nfiles in ${dir}`,
  );
  console.log(await runCase(fuzzCase, join(dir, 'run')));
  process.exit(0);
}

let total = 0;
for (const format of formats) {
  let done = 0;
  const summary = await runFuzz({
    format,
    seed,
    cases: Number(values.cases),
    start: Number(values.start),
    timeoutMs: Number(values.timeout),
    onCase: () => {
      if (++done % 1000 === 0) process.stderr.write(`${format}: ${done} cases\n`);
    },
  });
  total += summary.findings.length;
  console.log(
    `${format}: ${summary.cases} cases in ${(summary.ms / 1000).toFixed(1)} s (${(summary.ms / summary.cases).toFixed(1)} ms/case), ` +
      `${summary.opened} opened, ${summary.frames} frames read, slowest case ${summary.slowest.index} ${summary.slowest.ms.toFixed(0)} ms ` +
      `(${summary.slowest.mutation}), ${summary.findings.length} findings`,
  );
  for (const f of summary.findings) {
    console.log(
      `  case ${f.index} (--format ${format} --seed ${seed} --case ${f.index}): ${f.kind}: ${f.base ?? ''} ${f.target ?? ''} ${f.mutation ?? ''}\n    ${f.detail.split('\n').slice(0, 4).join('\n    ')}`,
    );
  }
}
process.exit(total > 0 ? 1 : 0);
