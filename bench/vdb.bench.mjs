#!/usr/bin/env node
// .vdb write/read throughput of @vlink/bag-sqlite versus the same driver's raw prepared-statement loops, in one
// process, interleaved, several repetitions; medians and ours/raw ratios go to bench/results/vdb-<runtime>.json.
//
//   node bench/vdb.bench.mjs [--quick] [--reps N]        bun bench/vdb.bench.mjs        (build the packages first)
//   --smoke: tiny sizes, two reps, only to check the harness works; results go to bench/results/smoke/.
//   VLINK_SQLITE_DRIVER=node:sqlite bun bench/vdb.bench.mjs   picks another driver
//
// "raw" uses exactly the writer's pragmas, DDL and commit batching (COMMIT once the bytes since the last commit exceed
// cacheSize), prepared `INSERT INTO VLinkDatas` with a constant url id and action; with LZAV on it also runs core's
// CompressionDecider per payload, so the ratio isolates our per-frame bookkeeping rather than the codec. The raw read
// is `SELECT elapsed, url, action, data FROM VLinkDatas ORDER BY elapsed, rowid` iterated (decompressing framed rows
// when LZAV is on), against `reader.frames({})`. The BagWriter row is `BagWriter.create(path, { syncMode: true,
// summary: false })`: no summary sidecar, which is a read of the whole file after close, not the write path compared
// here (as in the vcap and integrity benches).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadDriver, sqliteBackend, VDB_SQL } from '../packages/backend-sqlite/dist/index.js';
import { ActionType, resolveWriterConfig, SchemaType } from '../packages/core/dist/index.js';
import { CompressionDecider, decompressFrame, isCompressionFrame } from '../packages/core/dist/internal.js';
import { createTestContext } from '../packages/core/dist/testing/index.js';
import { payload } from './lib/payload.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const verbose = args.includes('--verbose');
const repsArg = args.indexOf('--reps');
// Even, so each side goes first equally often (the first writer after a cleanup pays more kernel time).
const REPS = repsArg >= 0 ? Number(args[repsArg + 1]) : smoke ? 2 : quick ? 4 : 6;
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vlink-vdb-bench-'));
const driver = await loadDriver();

const MiB = 1024 * 1024;
// Frame counts for roughly one second of writing each on a laptop-class machine (fewer with --quick).
const CASES = [
  { size: 64, frames: smoke ? 2_000 : quick ? 60_000 : 400_000 },
  { size: 4096, frames: smoke ? 500 : quick ? 15_000 : 60_000 },
  { size: MiB, frames: smoke ? 4 : quick ? 40 : 150 },
];

function makeFrames(size) {
  // A few distinct payloads reused round-robin: realistic bytes without gigabytes of input in memory.
  const variants = Array.from({ length: size >= MiB ? 4 : 16 }, (_, i) => payload(size, i + 1));
  return variants;
}

const context = createTestContext();
const URL = 'dds://bench/topic';

async function ourWrite(path, variants, n, compress) {
  const config = resolveWriterConfig({ compress: compress ? 'lzav' : 'none', syncMode: true });
  const t0 = performance.now();
  const writer = await sqliteBackend.createWriter(path, config, context);
  const frame = {
    timestamp: 0,
    url: URL,
    data: variants[0],
    serType: 'raw',
    schemaType: SchemaType.Raw,
    actionType: ActionType.Publish,
  };
  for (let i = 0; i < n; i++) {
    frame.timestamp = i * 100;
    frame.data = variants[i % variants.length];
    writer.write(frame, 0); // the one url's id (BackendWriter.write)
  }
  writer.close();
  return performance.now() - t0;
}

function rawWrite(path, variants, n, compress) {
  const config = resolveWriterConfig({ compress: compress ? 'lzav' : 'none' });
  const decider = compress
    ? new CompressionDecider({ enabled: true, startSize: config.compressStartSize, level: config.compressLevel })
    : undefined;
  const t0 = performance.now();
  rmSync(path, { force: true });
  const db = driver.open(path);
  db.exec(VDB_SQL.BUSY_TIMEOUT_WRITER);
  for (const p of VDB_SQL.writerPragmas(false)) db.exec(p);
  db.exec('BEGIN;');
  for (const ddl of VDB_SQL.DDL) db.exec(ddl);
  db.exec('COMMIT;');
  const insert = db.prepare(VDB_SQL.INSERT_DATA);
  const cacheSize = config.cacheSize;
  let since = 0;
  db.exec('BEGIN;');
  let open = true;
  for (let i = 0; i < n; i++) {
    if (!open) {
      db.exec('BEGIN;');
      open = true;
    }
    const data = variants[i % variants.length];
    insert.run(i * 100, 0, 'Pub', decider ? decider.maybeCompress(URL, data) : data);
    since += data.length;
    if (since > cacheSize) {
      db.exec('COMMIT;');
      open = false;
      since = 0;
    }
  }
  if (open) db.exec('COMMIT;');
  db.close();
  return performance.now() - t0;
}

async function ourRead(path) {
  const t0 = performance.now();
  const reader = await sqliteBackend.openReader(path, { readOnly: true });
  let bytes = 0;
  for (const f of reader.frames({})) bytes += f.data.length;
  reader.close();
  return { ms: performance.now() - t0, bytes };
}

function rawRead(path, compress) {
  const t0 = performance.now();
  const db = driver.open(path, { readOnly: true });
  let bytes = 0;
  for (const row of db
    .prepare('SELECT elapsed, url, action, data FROM VLinkDatas ORDER BY elapsed, rowid;')
    .iterate()) {
    let data = row.data;
    if (compress && isCompressionFrame(data)) data = decompressFrame(data);
    bytes += data.length;
  }
  db.close();
  return { ms: performance.now() - t0, bytes };
}

async function bagWriterCtor() {
  try {
    const mod = await import('../packages/bag/dist/index.js');
    if (typeof mod.BagWriter?.create !== 'function') return undefined;
    return mod.BagWriter;
  } catch {
    return undefined;
  }
}
const BagWriter = await bagWriterCtor();

async function bagWrite(path, variants, n, compress) {
  const t0 = performance.now();
  const writer = await BagWriter.create(path, {
    syncMode: true,
    compress: compress ? 'lzav' : 'none',
    startTimestamp: context.startTimestamp,
    summary: false,
  });
  for (let i = 0; i < n; i++) {
    writer.push({
      timestamp: i * 100,
      url: URL,
      data: variants[i % variants.length],
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    });
  }
  await writer.close();
  return performance.now() - t0;
}

/** Wall and process-CPU ms of one measured call (CPU time is robust to other load on a shared machine). */
async function measure(fn) {
  const c0 = process.cpuUsage();
  const out = await fn();
  const c = process.cpuUsage(c0);
  const ms = typeof out === 'number' ? out : out.ms;
  return {
    ms,
    cpu: (c.user + c.system) / 1000,
    user: c.user / 1000,
    bytes: typeof out === 'number' ? undefined : out.bytes,
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function loadAverage() {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  } catch {
    return undefined;
  }
}

const results = [];
console.log(
  `vdb bench: runtime ${runtime}, driver ${driver.name}, ${REPS} reps${quick ? ' (quick)' : ''}, ` +
    `BagWriter row: ${BagWriter ? 'yes' : 'no'}, load ${loadAverage()?.join(' ') ?? '?'}`,
);
for (const { size, frames: n } of CASES) {
  const variants = makeFrames(size);
  for (const compress of [false, true]) {
    const times = { ourWrite: [], rawWrite: [], bagWrite: [], ourRead: [], rawRead: [] };
    const ours = join(dir, `ours-${size}-${compress}.vdb`);
    const raw = join(dir, `raw-${size}-${compress}.vdb`);
    const bag = join(dir, `bag-${size}-${compress}.vdb`);
    const run = {
      ourWrite: () => measure(() => ourWrite(ours, variants, n, compress)),
      rawWrite: () => measure(() => rawWrite(raw, variants, n, compress)),
      bagWrite: () => measure(() => bagWrite(bag, variants, n, compress)),
      // Both reads use the file our writer produced.
      ourRead: () => measure(() => ourRead(ours)),
      rawRead: () => measure(() => rawRead(ours, compress)),
    };
    let fileBytes = 0;
    // Round −1 is a discarded warm-up (JIT tiers, first-time statement and file costs); then alternate which side
    // goes first so cache warmth and disk state do not favour one of them.
    for (let rep = -1; rep < REPS; rep++) {
      const keep = (k, sample) => {
        if (rep >= 0) times[k].push(sample);
      };
      const writes = rep % 2 === 0 ? ['ourWrite', 'rawWrite'] : ['rawWrite', 'ourWrite'];
      if (BagWriter) writes.push('bagWrite');
      for (const k of writes) keep(k, await run[k]());
      // Deleting files we no longer need drops their dirty pages, so kernel write-back throttling of one run does
      // not land on the next one (synchronous = OFF leaves hundreds of MiB dirty per case).
      rmSync(raw, { force: true });
      rmSync(bag, { force: true });
      fileBytes = statSync(ours).size;
      const reads = rep % 2 === 0 ? ['ourRead', 'rawRead'] : ['rawRead', 'ourRead'];
      const got = {};
      for (const k of reads) keep(k, (got[k] = await run[k]()));
      if (got.ourRead.bytes !== got.rawRead.bytes)
        throw new Error(`read mismatch ${got.ourRead.bytes} != ${got.rawRead.bytes}`);
      rmSync(ours, { force: true });
    }
    const present = Object.entries(times).filter(([, v]) => v.length > 0);
    if (verbose)
      for (const [k, v] of present)
        console.log(
          `   ${k.padEnd(8)} ms ${v.map((x) => x.ms.toFixed(0)).join(' ')}  cpu ${v.map((x) => x.cpu.toFixed(0)).join(' ')}  user ${v.map((x) => x.user.toFixed(0)).join(' ')}`,
        );
    const m = Object.fromEntries(present.map(([k, v]) => [k, median(v.map((x) => x.ms))]));
    const mc = Object.fromEntries(present.map(([k, v]) => [k, median(v.map((x) => x.cpu))]));
    const mu = Object.fromEntries(present.map(([k, v]) => [k, median(v.map((x) => x.user))]));
    const payloadMiB = (size * n) / MiB;
    const row = {
      payload: size,
      frames: n,
      lzav: compress,
      fileMiB: +(fileBytes / MiB).toFixed(2),
      medianMs: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, +v.toFixed(1)])),
      medianCpuMs: Object.fromEntries(Object.entries(mc).map(([k, v]) => [k, +v.toFixed(1)])),
      framesPerSec: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Math.round(n / (v / 1000))])),
      mibPerSec: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, +(payloadMiB / (v / 1000)).toFixed(1)])),
      ratio: {
        write: +(m.rawWrite / m.ourWrite).toFixed(3),
        read: +(m.rawRead / m.ourRead).toFixed(3),
        ...(m.bagWrite ? { bagWriterVsRaw: +(m.rawWrite / m.bagWrite).toFixed(3) } : {}),
      },
      cpuRatio: {
        write: +(mc.rawWrite / mc.ourWrite).toFixed(3),
        read: +(mc.rawRead / mc.ourRead).toFixed(3),
        ...(mc.bagWrite ? { bagWriterVsRaw: +(mc.rawWrite / mc.bagWrite).toFixed(3) } : {}),
      },
      userCpuRatio: {
        write: +(mu.rawWrite / mu.ourWrite).toFixed(3),
        read: +(mu.rawRead / mu.ourRead).toFixed(3),
        ...(mu.bagWrite ? { bagWriterVsRaw: +(mu.rawWrite / mu.bagWrite).toFixed(3) } : {}),
      },
    };
    results.push(row);
    console.log(
      `${String(size).padStart(7)} B  lzav ${compress ? 'on ' : 'off'}  ${String(n).padStart(6)} frames  ` +
        `write ${row.framesPerSec.ourWrite}/s vs raw ${row.framesPerSec.rawWrite}/s (×${row.ratio.write})  ` +
        `read ${row.framesPerSec.ourRead}/s vs raw ${row.framesPerSec.rawRead}/s (×${row.ratio.read})` +
        (m.bagWrite ? `  BagWriter ×${row.ratio.bagWriterVsRaw}` : '') +
        `  | cpu ×${row.cpuRatio.write} / ×${row.cpuRatio.read}` +
        (mc.bagWrite ? ` / BagWriter ×${row.cpuRatio.bagWriterVsRaw}` : '') +
        `  | user-cpu ×${row.userCpuRatio.write} / ×${row.userCpuRatio.read}`,
    );
  }
}
rmSync(dir, { recursive: true, force: true });

const out = join(here, 'results', smoke ? 'smoke' : '', `vdb-${runtime}.json`);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      runtime,
      runtimeVersion:
        typeof Bun !== 'undefined' ? Bun.version : typeof Deno !== 'undefined' ? Deno.version.deno : process.version,
      driver: driver.name,
      reps: REPS,
      quick,
      date: new Date().toISOString(),
      loadAverage: loadAverage(),
      note:
        'ratio = raw median wall time / our median wall time (1.0 = as fast as the raw driver loop; goal ≥ 0.9); ' +
        'cpuRatio uses process CPU time (user + system), userCpuRatio user time only (our code, without kernel I/O work); ' +
        'the BagWriter row writes no summary sidecar (summary: false)',
      results,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
