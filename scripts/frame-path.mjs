#!/usr/bin/env node
// Which of our files a frame passes through on its way from `push()` / `await write()` to a `.vcap` file: the files
// with a function that ran once per frame or more. Measured, not read off the code: each mode writes N frames in a
// child process under V8's precise coverage (NODE_V8_COVERAGE, call counts per function, every thread), and a file
// counts when one of its functions was called ≥ N times. Code that runs per batch (the worker's batch loop) or per chunk
// (a chunk's encoders, the CRC, the file writes) is listed apart: the files whose calls grow with the frames, found by
// a second run of 2N frames (chunks of 64 KiB, so that several are written). Run after the build:
//   node scripts/frame-path.mjs [--max N]     --max: fail when a mode's per-frame files exceed N
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const root = resolve(import.meta.dirname, '..');
const { values } = parseArgs({ options: { max: { type: 'string' } } });
const FRAMES = 5000;
const MODES = {
  sync: '{ syncMode: true, summary: false, cacheSize: 64 * 1024 }',
  'worker push': '{ summary: false, cacheSize: 64 * 1024 }',
  'worker await write': '{ summary: false, cacheSize: 64 * 1024 }',
};

function measure(mode, FRAMES) {
  const dir = mkdtempSync(join(tmpdir(), 'vlink-frame-path-'));
  const program = join(dir, 'write.mjs');
  const call = mode.endsWith('await write') ? 'await writer.write(frame(i))' : 'writer.push(frame(i))';
  writeFileSync(
    program,
    `import { ActionType, BagWriter, SchemaType } from ${JSON.stringify(join(root, 'packages/bag/dist/index.js'))};
const data = new Uint8Array(64);
const frame = (i) => ({ timestamp: i, url: 'dds://path', data, serType: 'raw', schemaType: SchemaType.Raw, actionType: ActionType.Publish });
const writer = await BagWriter.create(${JSON.stringify(join(dir, 'a.vcap'))}, ${MODES[mode]});
for (let i = 0; i < ${FRAMES}; i++) ${call};
await writer.close();
`,
  );
  const coverage = join(dir, 'coverage');
  const run = spawnSync(process.execPath, [program], { env: { ...process.env, NODE_V8_COVERAGE: coverage } });
  if (run.status !== 0) throw new Error(`${mode}: ${run.stderr}`);
  // The most calls of any one function, per file of ours.
  const calls = new Map();
  for (const name of readdirSync(coverage)) {
    for (const script of JSON.parse(readFileSync(join(coverage, name), 'utf8')).result) {
      if (!script.url.startsWith('file://') || !script.url.includes('/packages/')) continue;
      const file = relative(root, new URL(script.url).pathname).replace('/dist/', '/src/').replace(/\.js$/, '.ts');
      for (const fn of script.functions) calls.set(file, Math.max(calls.get(file) ?? 0, fn.ranges[0].count));
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return calls;
}

/** The files called per frame, and those whose calls grow with the frames (per batch, per chunk). */
function path(mode) {
  const once = measure(mode, FRAMES);
  const twice = measure(mode, 2 * FRAMES);
  const perFrame = [...once].filter(([file, n]) => n >= FRAMES && twice.get(file) >= 2 * FRAMES).map(([f]) => f);
  const grows = [...once].filter(([file, n]) => n < FRAMES && twice.get(file) >= 1.5 * n + 1).map(([f]) => f);
  return { perFrame: perFrame.sort(), perBatch: grows.sort() };
}

let failed = false;
for (const mode of Object.keys(MODES)) {
  const { perFrame, perBatch } = path(mode);
  console.log(`${mode}: ${perFrame.length} files per frame`);
  for (const file of perFrame) console.log(`  ${file}`);
  console.log(`  (also called per batch or chunk: ${perBatch.join(', ') || 'none'})`);
  if (values.max && perFrame.length > Number(values.max)) failed = true;
}
if (failed) {
  console.error(`a mode passes through more than ${values.max} files per frame`);
  process.exit(1);
}
