#!/usr/bin/env node
// Runs the benchmarks one at a time (they measure) on each runtime, records what ran and the machine's load in
// bench/results/run.json, then generates BENCHMARKS.md from the results (bench/report.mjs).
//
//   node bench/run.mjs [--quick | --smoke] [--only name,...] [--runtimes node,bun,deno] [--no-report]
//
// --quick: each benchmark's --quick sizes. --smoke: tiny sizes, the whole run in about two minutes, only to check
// that the harness works: results go to bench/results/smoke/ (ignored by git) and BENCHMARKS.md is left alone.
// Build first (`npm run bench` does). Exits 1 when a benchmark failed (a skipped one is not a failure).
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { BENCHMARKS, RUNTIMES } from './lib/benchmarks.mjs';
import { isLoaded, startLoadSampler } from './lib/load.mjs';
import { machineInfo, PYTHON, REPO, runtimeCommand, runtimeVersions } from './lib/machine.mjs';
import { generateReport, readRunInfo, updateReadmeBlocks } from './report.mjs';

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    smoke: { type: 'boolean', default: false },
    only: { type: 'string' },
    runtimes: { type: 'string', default: RUNTIMES.join(',') },
    'no-report': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) {
  console.log(
    readFileSync(new URL(import.meta.url), 'utf8')
      .split('\n')
      .slice(1, 9)
      .map((l) => l.replace(/^\/\/ ?/, ''))
      .join('\n'),
  );
  console.log(`benchmarks: ${BENCHMARKS.map((b) => b.name).join(', ')}`);
  process.exit(0);
}
if (opts.quick && opts.smoke) throw new Error('--quick and --smoke exclude each other');
const mode = opts.smoke ? 'smoke' : opts.quick ? 'quick' : 'full';
const only = opts.only
  ?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const name of only ?? [])
  if (!BENCHMARKS.some((b) => b.name === name))
    throw new Error(`unknown benchmark ${name} (known: ${BENCHMARKS.map((b) => b.name).join(', ')})`);
const runtimes = opts.runtimes
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
for (const rt of runtimes)
  if (!RUNTIMES.includes(rt)) throw new Error(`unknown runtime ${rt} (known: ${RUNTIMES.join(', ')})`);

for (const pkg of [
  'core',
  'decode',
  'backend-sqlite',
  'backend-mcap',
  'backend-interop',
  'bag',
  'align',
  'lake',
  'http-api',
  'cli',
]) {
  if (!existsSync(join(REPO, 'packages', pkg, 'dist', 'index.js'))) {
    console.error(`packages/${pkg}/dist is missing: build first (npm run build; npm run bench does)`);
    process.exit(1);
  }
}
const resultsDir = join(REPO, 'bench', 'results', ...(mode === 'smoke' ? ['smoke'] : []));
const logDir = join(REPO, 'bench', 'tmp', 'run-logs', mode);
mkdirSync(resultsDir, { recursive: true });
mkdirSync(logDir, { recursive: true });
// A smoke run checks the harness, so a benchmark gets at most this long; full ones may legitimately take long.
const TIMEOUT_S = { smoke: 120, quick: 20 * 60, full: 60 * 60 }[mode];
const quiet = mode === 'smoke';

/** An executable as the run log shows it: relative inside the repository, else its name (no machine's paths). */
function displayExe(exe) {
  const inside = relative(REPO, exe);
  return inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : basename(exe);
}

/** The command for one benchmark on one runtime, or why it is skipped. */
function command(bench, runtime) {
  const flag = mode === 'full' ? [] : [`--${mode}`];
  if (runtime === 'deno' && typeof bench.deno === 'string') return { skip: bench.deno };
  if (bench.manual) return { skip: bench.manual };
  if (bench.python) {
    if (!existsSync(PYTHON)) return { skip: 'clients/python/.venv is missing (scripts/test-python.sh creates it)' };
    // Relative to the repository (the child runs there), so the run log names no path of this machine.
    const out = relative(REPO, join(resultsDir, `${bench.name}-${runtime}.json`));
    return { exe: PYTHON, args: [join('bench', bench.script), ...flag, '--runtime', runtime, '--out', out] };
  }
  const rt = runtimeCommand(runtime);
  if (rt.missing) return { skip: rt.missing };
  return { exe: rt.exe, args: [...rt.args, join('bench', bench.script), ...flag] };
}

function runOne(bench, runtime, cmd) {
  const logFile = join(logDir, `${bench.name}-${runtime}.log`);
  const log = createWriteStream(logFile);
  log.write(`$ ${cmd.exe} ${cmd.args.join(' ')}\n`);
  const tail = [];
  const child = spawn(cmd.exe, cmd.args, {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, FORCE_COLOR: '0' },
  });
  const onData = (stream) => (chunk) => {
    log.write(chunk);
    if (!quiet) stream.write(chunk);
    tail.push(...chunk.toString().split('\n'));
    tail.splice(0, Math.max(0, tail.length - 40));
  };
  child.stdout.on('data', onData(process.stdout));
  child.stderr.on('data', onData(process.stderr));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      process.kill(-child.pid, 'SIGKILL'); // the benchmark and its children (servers, section processes)
    } catch {}
  }, TIMEOUT_S * 1000);
  return new Promise((resolve) => {
    child.on('error', (error) => tail.push(String(error)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      log.end();
      resolve({ code, signal, timedOut, tail: tail.join('\n').trim(), logFile });
    });
  });
}

const info = readRunInfo(resultsDir);
const versions = runtimeVersions();
const run = {
  command: `node bench/run.mjs ${process.argv.slice(2).join(' ')}`.trim(),
  mode,
  startedAt: new Date().toISOString(),
  machine: machineInfo(),
  runtimeVersions: versions,
  runtimes,
  only: only ?? null,
};
const runLoad = startLoadSampler();
console.log(
  `bench/run.mjs: ${mode} run on ${runtimes.join(', ')}; ${run.machine.cpu}, ${run.machine.cores} cores, load average ${run.machine.loadAverage.join(' ')}\n` +
    `results → ${relative(REPO, resultsDir)}/, logs → ${relative(REPO, logDir)}/`,
);

const outcomes = [];
for (const bench of BENCHMARKS) {
  if (only && !only.includes(bench.name)) continue;
  for (const runtime of runtimes) {
    const key = `${bench.name}/${runtime}`;
    const cmd = command(bench, runtime);
    if (cmd.skip) {
      info.entries[key] = { status: 'skipped', reason: cmd.skip, mode, endedAt: new Date().toISOString() };
      outcomes.push({ key, status: 'skipped', note: cmd.skip });
      console.log(`\n=== ${key}: skipped (${cmd.skip})`);
      continue;
    }
    const startedAt = new Date().toISOString();
    if (!quiet) console.log(`\n=== ${key} (${mode}) — load average ${machineInfo().loadAverage.join(' ')}`);
    const sampler = startLoadSampler();
    const t0 = performance.now();
    const r = await runOne(bench, runtime, cmd);
    const seconds = Math.round((performance.now() - t0) / 100) / 10;
    const load = sampler.stop();
    const entry = {
      status: 'ok',
      mode,
      startedAt,
      endedAt: new Date().toISOString(),
      seconds,
      load,
      command: `${displayExe(cmd.exe)} ${cmd.args.join(' ')}`,
    };
    if (r.timedOut) Object.assign(entry, { status: 'failed', reason: `timed out after ${TIMEOUT_S} s` });
    else if (r.code !== 0) Object.assign(entry, { status: 'failed', reason: `exit ${r.code ?? r.signal}` });
    else {
      // The run must have left fresh results that its summarizer can read.
      const { file, data } = bench.load(resultsDir, runtime);
      const date = Date.parse(data?.date ?? '');
      if (!data) Object.assign(entry, { status: 'failed', reason: `no results in ${relative(REPO, file)}` });
      else if (!(date >= Date.parse(startedAt) - 2000))
        Object.assign(entry, { status: 'failed', reason: `${relative(REPO, file)} was not rewritten` });
      else {
        try {
          bench.summarize(data);
        } catch (error) {
          Object.assign(entry, { status: 'failed', reason: `summarizing ${relative(REPO, file)}: ${error.message}` });
        }
      }
    }
    info.entries[key] = entry;
    const loadNote = load.othersCores
      ? `others' CPU ${load.othersCores.mean} cores${isLoaded(load) ? ' (loaded)' : ''}`
      : `load ${load.loadAvgStart[0]}`;
    outcomes.push({ key, status: entry.status, seconds, note: entry.reason ?? loadNote });
    console.log(`=== ${key}: ${entry.status}${entry.reason ? ` (${entry.reason})` : ''} in ${seconds} s, ${loadNote}`);
    if (entry.status !== 'ok') console.log(`--- last lines (whole log: ${relative(REPO, r.logFile)}):\n${r.tail}\n---`);
    // Saved after every benchmark, so an interrupted run keeps what it measured.
    writeFileSync(
      join(resultsDir, 'run.json'),
      JSON.stringify({ ...info, runs: [...info.runs, { ...run, seconds: null, load: null }].slice(-20) }, null, 2) +
        '\n',
    );
  }
}
run.load = runLoad.stop();
run.seconds = Math.round((Date.now() - Date.parse(run.startedAt)) / 1000);
info.runs = [...info.runs, run].slice(-20);
writeFileSync(join(resultsDir, 'run.json'), `${JSON.stringify(info, null, 2)}\n`);

console.log(`\n${mode} run: ${run.seconds} s`);
for (const o of outcomes)
  console.log(
    `  ${o.key.padEnd(18)} ${o.status.padEnd(8)} ${o.seconds !== undefined ? `${String(o.seconds).padStart(6)} s` : '        '}  ${o.note ?? ''}`,
  );

if (!opts['no-report']) {
  // Smoke results only check the generator; the real report is made from full or quick runs.
  const outFile = mode === 'smoke' ? join(resultsDir, 'BENCHMARKS.md') : join(REPO, 'BENCHMARKS.md');
  writeFileSync(outFile, generateReport(resultsDir));
  console.log(`wrote ${relative(REPO, outFile)}`);
  // The READMEs' generated blocks quote the report: they follow it (not from smoke results).
  if (mode !== 'smoke') for (const file of updateReadmeBlocks()) console.log(`wrote ${file}`);
}
const failed = outcomes.filter((o) => o.status === 'failed');
const ran = outcomes.filter((o) => o.status === 'ok').length;
console.log(`bench: ${ran} passed, ${failed.length} failed, ${outcomes.length - ran - failed.length} skipped`);
process.exit(failed.length ? 1 : 0);
