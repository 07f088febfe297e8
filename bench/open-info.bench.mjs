#!/usr/bin/env node
// Open + info of a 1M-message bag: `BagReader.create(path)` then `getInfo()`, each measurement in a new process of
// the same runtime (cold JIT and fresh reader state; the file itself stays in the page cache). Absolute numbers for
// .vdb and .vcap, no baseline. Also reported: the same call again in that process (warm), and the module import time.
// The bags (1M × 64 B frames over 5 urls, 100 µs apart, default writer options) are written once and cached in
// bench/tmp/open-info-<messages>/. Results: bench/results/open-info-<runtime>.json.
//
//   node bench/open-info.bench.mjs [--quick] [--reps N]     bun bench/open-info.bench.mjs
//   deno run -A --node-modules-dir=manual bench/open-info.bench.mjs
//   --smoke: a 20k-message bag, two processes per format, only to check the harness works (bench/results/smoke/).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const script = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const childAt = args.indexOf('--child');
if (childAt >= 0) {
  // Child: one measurement. Only the import precedes it.
  const path = args[childAt + 1];
  const t0 = performance.now();
  const { BagReader } = await import('../packages/bag/dist/index.js');
  const t1 = performance.now();
  const reader = await BagReader.create(path);
  const info = reader.getInfo();
  const t2 = performance.now();
  reader.close();
  const t3 = performance.now();
  const again = await BagReader.create(path);
  again.getInfo();
  const t4 = performance.now();
  again.close();
  console.log(
    'RESULT ' +
      JSON.stringify({
        importMs: t1 - t0,
        openInfoMs: t2 - t1,
        warmOpenInfoMs: t4 - t3,
        messageCount: info.messageCount,
        urls: info.urls.length,
      }),
  );
  process.exit(0);
}

const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const repsAt = args.indexOf('--reps');
const REPS = repsAt >= 0 ? Number(args[repsAt + 1]) : smoke ? 2 : quick ? 5 : 11;
const MESSAGES = smoke ? 20_000 : 1_000_000;
const FORMATS = ['vdb', 'vcap'];
const dir = join(here, 'tmp', `open-info-${MESSAGES}`);

async function ensureBag(ext) {
  const path = join(dir, `bag.${ext}`);
  if (existsSync(`${path}.done`)) return path;
  mkdirSync(dir, { recursive: true });
  const { ActionType, BagWriter, SchemaType } = await import('../packages/bag/dist/index.js');
  const payloads = Array.from({ length: 16 }, (_, i) =>
    Uint8Array.from({ length: 64 }, (_, j) => (i * 31 + j * 7) & 0xff),
  );
  const t0 = performance.now();
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: 1_773_712_800_123 });
  for (let i = 0; i < MESSAGES; i++) {
    writer.push({
      timestamp: 1000 + i * 100,
      url: `dds://topic/${i % 5}`,
      data: payloads[i % 16],
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  writeFileSync(`${path}.done`, '');
  console.log(`wrote ${path} (${MESSAGES} messages, ${round((performance.now() - t0) / 1000, 1)} s)`);
  return path;
}

function measureInChild(path) {
  const runtimeArgs = runtime === 'deno' ? ['run', '-A', '--node-modules-dir=manual'] : [];
  const t0 = performance.now();
  const child = spawnSync(process.execPath, [...runtimeArgs, script, '--child', path], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const processMs = performance.now() - t0;
  const last = child.stdout.trimEnd().split('\n').at(-1) ?? '';
  if (child.status !== 0 || !last.startsWith('RESULT '))
    throw new Error(`child for ${path} failed (exit ${child.status}): ${child.stdout}`);
  return { ...JSON.parse(last.slice(7)), processMs };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const paths = {};
for (const ext of FORMATS) paths[ext] = await ensureBag(ext);
const loadAverageAtStart = loadavg().map((x) => round(x));
const runs = Object.fromEntries(FORMATS.map((f) => [f, []]));
// One untimed child per format first (the first process after writing pays for loading the runtime's own files).
for (const ext of FORMATS) measureInChild(paths[ext]);
for (let rep = 0; rep < REPS; rep++) {
  for (const ext of rep % 2 ? [...FORMATS].reverse() : FORMATS) runs[ext].push(measureInChild(paths[ext]));
}

const results = FORMATS.map((ext) => {
  const list = runs[ext];
  const stat = (key) => ({
    median: round(median(list.map((x) => x[key]))),
    min: round(Math.min(...list.map((x) => x[key]))),
    max: round(Math.max(...list.map((x) => x[key]))),
  });
  const row = {
    format: ext,
    messages: list[0].messageCount,
    fileBytes: statSync(paths[ext]).size,
    openInfoMs: stat('openInfoMs'),
    warmOpenInfoMs: stat('warmOpenInfoMs'),
    importMs: stat('importMs'),
    processMs: stat('processMs'),
    runs: list.map((x) => round(x.openInfoMs)),
  };
  if (row.messages !== MESSAGES) throw new Error(`${ext}: getInfo() says ${row.messages} messages, wrote ${MESSAGES}`);
  console.log(
    `${ext.padEnd(4)} ${MESSAGES} messages, ${round(row.fileBytes / 2 ** 20, 1)} MiB: open + getInfo ${row.openInfoMs.median} ms (min ${row.openInfoMs.min}, max ${row.openInfoMs.max}), ` +
      `warm ${row.warmOpenInfoMs.median} ms, import ${row.importMs.median} ms, whole process ${row.processMs.median} ms`,
  );
  return row;
});

const out = {
  bench: 'open-info',
  runtime,
  runtimeVersion: runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node,
  date: new Date().toISOString(),
  quick,
  reps: REPS,
  messages: MESSAGES,
  loadAverageAtStart,
  note: 'openInfoMs: BagReader.create + getInfo in a fresh process (page cache warm); warmOpenInfoMs: the same again in that process',
  results,
};
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `open-info-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
console.log(`wrote ${join(resultsDir, `open-info-${runtime}.json`)}`);
