#!/usr/bin/env node
// Import throughput of the foreign-format readers (@vlink/bag-interop, through BagReader as users call it) against
// the reference TypeScript reader of each format in the same process: @foxglove/rosbag for ROS 1 .bag (uncompressed
// and lz4 chunks; decompressed by @foxglove/wasm-lz4, what Foxglove uses), @mcap/core McapIndexedReader for .mcap
// (zstd and uncompressed chunks), @foxglove/ulog for .ulg. Every contender opens the file and touches every message's
// payload; none decodes a payload except @foxglove/ulog, which has no raw mode (its readMessages parses each sample).
// Files are made by repeating the messages of fixtures/foreign (bench/lib/foreign-files.mjs), in a temporary
// directory. Contenders interleaved and rotated, medians; ratio = reference time / our time (> 1: we are faster).
// Results: bench/results/interop-<runtime>.json.
//
//   node bench/interop.bench.mjs [--quick] [--reps N]      bun bench/interop.bench.mjs      (build the packages first)
//   --smoke: tiny sizes, one rep, only to check the harness works; results go to bench/results/smoke/.
//   --python <interpreter> (or VLINK_BENCH_REFERENCE_PYTHON=<interpreter>): also time the Python reference readers
//     (rosbags, mcap, pyulog: bench/interop_python.py) on the same files, with an interpreter that has them (e.g. a
//     venv of fixtures/foreign/requirements.txt). Not a contender of the ratio (another runtime): reported beside it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import lz4 from '@foxglove/wasm-lz4';
import zstd from '@foxglove/wasm-zstd';
import { Bag } from '@foxglove/rosbag';
import { ULog } from '@foxglove/ulog';
import { McapIndexedReader, McapStreamReader } from '@mcap/core';
import { fixturePath } from '@vlink/fixtures';
import { BagReader } from '../packages/bag/dist/index.js';
import { writeMcap, writeRos1Bag, writeUlog } from './lib/foreign-files.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const repsArg = args.indexOf('--reps');
const REPS = repsArg >= 0 ? Number(args[repsArg + 1]) : smoke ? 1 : quick ? 3 : 5;
const TARGET = (smoke ? 1 : quick ? 16 : 64) * 2 ** 20;
const pythonArg = args.indexOf('--python');
// Also from the environment, so that `bench/run.mjs` (which passes no flags of its own) can ask for it.
const PYTHON = pythonArg >= 0 ? args[pythonArg + 1] : process.env['VLINK_BENCH_REFERENCE_PYTHON'] || undefined;
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vlink-interop-bench-'));
await lz4.isLoaded;
await zstd.isLoaded;

// --- the files -------------------------------------------------------------------------------------------------

/** The ROS 1 fixture's connections and messages, read back with our reader. */
async function ros1Source() {
  const reader = await BagReader.create(fixturePath('foreign', 'ros1', 'plain.bag'));
  const info = reader.getInfo();
  const schemas = reader.getSchemas();
  const connections = info.metadata
    .filter((m) => m.name === 'rosbag.connection')
    .map((m) => ({
      id: Number(m.values.id),
      topic: m.values.topic,
      type: m.values.type,
      md5sum: m.values.md5sum,
      definition: new TextDecoder().decode(schemas.find((s) => s.name === m.values.type).data),
    }));
  const startNs = BigInt(info.startTimestamp) * 1_000_000n;
  const messages = [];
  for await (const f of reader.frames())
    messages.push({
      conn: connections.find((c) => c.topic === f.url).id,
      time: startNs + BigInt(f.timestamp) * 1000n,
      data: f.data.slice(),
    });
  reader.close();
  return { connections, messages };
}

/** The ROS 2 MCAP fixture's records, read with @mcap/core. */
function mcapSource() {
  const stream = new McapStreamReader({ decompressHandlers: { zstd: (d, size) => zstd.decompress(d, Number(size)) } });
  stream.append(readFileSync(fixturePath('foreign', 'mcap', 'ros2.mcap')));
  const schemas = [];
  const channels = [];
  const messages = [];
  for (let r = stream.nextRecord(); r; r = stream.nextRecord()) {
    if (r.type === 'Schema') schemas.push(r);
    if (r.type === 'Channel') channels.push(r);
    if (r.type === 'Message') messages.push({ ...r, data: r.data.slice() });
  }
  return { schemas, channels, messages };
}

const files = [];
{
  const ros1 = await ros1Source();
  const bytesPer = ros1.messages.reduce((n, m) => n + m.data.length + 40, 0) / ros1.messages.length;
  const count = Math.ceil(TARGET / bytesPer);
  for (const compression of ['none', 'lz4']) {
    const path = join(dir, `big-${compression}.bag`);
    writeRos1Bag(path, { ...ros1, count, periodNs: 2_000_000_000n, compression });
    files.push({ format: 'ros1', variant: `${compression} chunks`, path, messages: count });
  }
  const mcap = mcapSource();
  const mcapCount = Math.ceil(
    TARGET / (mcap.messages.reduce((n, m) => n + m.data.length + 31, 0) / mcap.messages.length),
  );
  for (const compression of ['zstd', 'none']) {
    const path = join(dir, `big-${compression}.mcap`);
    await writeMcap(path, { ...mcap, count: mcapCount, periodNs: 2_000_000_000n, compression });
    files.push({ format: 'mcap', variant: `${compression} chunks`, path, messages: mcapCount });
  }
  const fixture = fixturePath('foreign', 'ulog', 'flight.ulg');
  const path = join(dir, 'big.ulg');
  // @foxglove/ulog parses every sample into an object (about 1 MB/s): an eighth of the size keeps the run short.
  const rounds = Math.ceil(TARGET / 8 / statSync(fixture).size);
  writeUlog(path, fixture, rounds, 200_000);
  const probe = await BagReader.create(path);
  files.push({ format: 'ulog', variant: 'samples', path, messages: probe.getInfo().messageCount });
  probe.close();
}

// --- the contenders ----------------------------------------------------------------------------------------------

/** BagReader's async iterator (what `for await` users get). Returns messages and payload bytes read. */
async function oursIterator(path) {
  const reader = await BagReader.create(path);
  let n = 0;
  let bytes = 0;
  for await (const frame of reader.frames()) {
    n++;
    bytes += frame.data.length;
  }
  reader.close();
  return [n, bytes];
}

/** BagReader's synchronous cursor (what `clone` and `cat` use). */
async function oursCursor(path) {
  const reader = await BagReader.create(path);
  let n = 0;
  let bytes = 0;
  reader.openCursor();
  for (let frame = reader.next(); frame; frame = reader.next()) {
    n++;
    bytes += frame.data.length;
  }
  reader.close();
  return [n, bytes];
}

/**
 * The `Filelike` both Foxglove readers take (async reads at offsets), over a FileHandle we close ourselves: their own
 * node FileReaders leave the handle to garbage collection, which Bun refuses.
 */
async function filelike(path) {
  const handle = await open(path, 'r');
  const size = (await handle.stat()).size;
  return {
    open: async () => size,
    size: () => size,
    read: async (offset, length) => {
      const out = new Uint8Array(length);
      await handle.read(out, 0, length, offset);
      return out;
    },
    close: () => handle.close(),
  };
}

async function foxgloveRosbag(path) {
  const file = await filelike(path);
  const bag = new Bag(file, { parse: false, decompress: { lz4: (buffer, size) => lz4(buffer, size) } });
  await bag.open();
  let n = 0;
  let bytes = 0;
  for await (const event of bag.messageIterator()) {
    n++;
    bytes += event.data.length;
  }
  await file.close();
  return [n, bytes];
}

async function mcapIndexed(path) {
  const handle = await open(path, 'r');
  const size = BigInt((await handle.stat()).size);
  const readable = {
    size: async () => size,
    read: async (offset, length) => {
      const out = new Uint8Array(Number(length));
      await handle.read(out, 0, out.length, Number(offset));
      return out;
    },
  };
  const reader = await McapIndexedReader.Initialize({
    readable,
    decompressHandlers: { zstd: (data, size) => zstd.decompress(data, Number(size)) },
  });
  let n = 0;
  let bytes = 0;
  for await (const message of reader.readMessages()) {
    n++;
    bytes += message.data.length;
  }
  await handle.close();
  return [n, bytes];
}

async function foxgloveUlog(path) {
  const file = await filelike(path);
  const ulog = new ULog(file);
  await ulog.open();
  let n = 0;
  for await (const message of ulog.readMessages({ includeLogs: true })) if (message.type === 68 /* D */) n++;
  await file.close();
  return [n, 0];
}

const REFERENCE = {
  ros1: ['@foxglove/rosbag', foxgloveRosbag],
  mcap: ['@mcap/core McapIndexedReader', mcapIndexed],
  ulog: ['@foxglove/ulog', foxgloveUlog],
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
for (const file of files) {
  const fileBytes = statSync(file.path).size;
  const [referenceName, reference] = REFERENCE[file.format];
  const contenders = [
    ['ours (async iterator)', oursIterator],
    ['ours (cursor)', oursCursor],
    [referenceName, reference],
  ];
  const times = new Map(contenders.map(([name]) => [name, []]));
  const counts = new Map();
  for (const [, fn] of contenders) await fn(file.path); // warm-up: page cache, JIT, WebAssembly modules
  for (let rep = 0; rep < REPS; rep++) {
    const order = contenders.map((_, i) => contenders[(i + rep) % contenders.length]);
    for (const [name, fn] of order) {
      const start = performance.now();
      const [n] = await fn(file.path);
      times.get(name).push(performance.now() - start);
      counts.set(name, n);
    }
  }
  const entry = {
    format: file.format,
    variant: file.variant,
    fileBytes,
    messages: file.messages,
    reference: referenceName,
    contenders: {},
  };
  for (const [name] of contenders) {
    const ms = median(times.get(name));
    entry.contenders[name] = {
      medianMs: ms,
      runsMs: times.get(name),
      MBs: fileBytes / 1e3 / ms,
      msgsPerS: (counts.get(name) / ms) * 1000,
      messagesRead: counts.get(name),
    };
  }
  const ref = entry.contenders[referenceName].medianMs;
  entry.ratio = ref / entry.contenders['ours (async iterator)'].medianMs;
  entry.ratioCursor = ref / entry.contenders['ours (cursor)'].medianMs;
  results.push(entry);
  console.log(
    `${file.format} ${file.variant}: ${(fileBytes / 2 ** 20).toFixed(1)} MiB, ${file.messages} messages — ` +
      contenders
        .map(
          ([name]) =>
            `${name} ${entry.contenders[name].medianMs.toFixed(1)} ms (${entry.contenders[name].MBs.toFixed(0)} MB/s)`,
        )
        .join(', ') +
      ` — ratio ${entry.ratio.toFixed(2)}× (cursor ${entry.ratioCursor.toFixed(2)}×)`,
  );
}

if (PYTHON) {
  // One run of the Python script over every file, after ours (the files are still there).
  const script = join(here, 'interop_python.py');
  const run = spawnSync(PYTHON, [script, String(REPS), ...files.map((f) => `${f.format}=${f.path}`)], {
    encoding: 'utf8',
    maxBuffer: 16 * 2 ** 20,
  });
  if (run.status !== 0) throw new Error(`${PYTHON} ${script} failed:\n${run.stderr}`);
  const timed = JSON.parse(run.stdout);
  for (const [i, file] of files.entries()) {
    const t = timed[file.path];
    const entry = results[i];
    entry.python = {
      reader: t.reader,
      medianMs: t.medianMs,
      runsMs: t.runsMs,
      MBs: entry.fileBytes / 1e3 / t.medianMs,
      msgsPerS: (t.messagesRead / t.medianMs) * 1000,
      messagesRead: t.messagesRead,
      ratio: t.medianMs / entry.contenders['ours (async iterator)'].medianMs,
    };
    console.log(
      `${file.format} ${file.variant}: ${t.reader} ${t.medianMs.toFixed(1)} ms — Python time / ours ${entry.python.ratio.toFixed(2)}×`,
    );
  }
}

rmSync(dir, { recursive: true, force: true });
const out = {
  date: new Date().toISOString(),
  quick,
  smoke,
  reps: REPS,
  runtime,
  runtimeVersion,
  targetBytes: TARGET,
  results,
};
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `interop-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
