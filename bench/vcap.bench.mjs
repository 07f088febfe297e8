#!/usr/bin/env node
// .vcap write/read throughput of @vlink/bag-mcap against @mcap/core (McapWriter over a file writable,
// McapIndexedReader.readMessages()) and a raw `fs` write+fsync of the same payload bytes. One process, contenders
// interleaved (rotated each repetition), medians; results go to bench/results/vcap-<runtime>.json.
//
//   node bench/vcap.bench.mjs [--quick] [--reps N]        bun bench/vcap.bench.mjs        (build the packages first)
//   --smoke: tiny sizes, one rep, only to check the harness works; results go to bench/results/smoke/.
//
// Every contender writes one url/channel, 4 MiB chunks, zstd at the same level (VLink's default compress_level 3 →
// mcap "Default" → zstd 1), and ends with fsync. "ours" is the Backend writer (`mcapBackend.createWriter`) driven
// directly; "bag" is `BagWriter.create(path, { syncMode: true })` from @vlink/bag, i.e. ours plus the core's frame
// checks and bookkeeping. Reads: `mcapBackend.openReader(path).frames({})` vs `McapIndexedReader.readMessages()` over
// the same file (written by us), both touching every payload. For zstd, each case also times the compression alone
// (`zstdAlone`, see compressionAlone): the floor it sets on our time, as a cap on the ratio against McapWriter.
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import zstd from '@foxglove/wasm-zstd';
import { McapIndexedReader, McapWriter } from '@mcap/core';
import { loadCodecs, mcapBackend } from '../packages/backend-mcap/dist/index.js';
import { CRC32_IMPLEMENTATION } from '../packages/backend-mcap/dist/mcap/crc32.js';
import { ZSTD_IMPLEMENTATION } from '../packages/backend-mcap/dist/compress/zstd-compress.js';
import { ActionType, resolveWriterConfig, SchemaType } from '../packages/core/dist/index.js';
import { createTestContext } from '../packages/core/dist/testing/index.js';
import { payload } from './lib/payload.mjs';

const bag = await import('../packages/bag/dist/index.js').catch(() => undefined);
const BagWriter = bag?.BagWriter;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const repsArg = args.indexOf('--reps');
// Nine: each run ends with an fsync, whose time on this machine's disk moves a 64 B run by up to 40 ms (runs of 60 or 100 ms).
const REPS = repsArg >= 0 ? Number(args[repsArg + 1]) : smoke ? 1 : quick ? 3 : 9;
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const runtimeVersion = runtime === 'bun' ? Bun.version : runtime === 'deno' ? Deno.version.deno : process.versions.node;
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'vlink-vcap-bench-'));
await loadCodecs();
await zstd.isLoaded;

const KiB = 1024;
const MiB = 1024 * KiB;
const CHUNK = 4 * MiB;
const ZSTD_LEVEL = 1;
const CASES = [
  { size: 64, frames: smoke ? 2_000 : quick ? 60_000 : 300_000 },
  { size: 4 * KiB, frames: smoke ? 300 : quick ? 8_000 : 40_000 },
  { size: MiB, frames: smoke ? 4 : quick ? 48 : 192 },
];
const COMPRESSIONS = ['none', 'zstd'];

const context = createTestContext();
const URL = 'dds://bench/topic';
const START_NS = BigInt(context.startTimestamp) * 1_000_000n;
let fileNo = 0;
const nextPath = (name) => join(dir, `${name}-${fileNo++}.vcap`);

// --- writers -----------------------------------------------------------------------------------------------------

async function oursWrite(variants, n, compress, path) {
  const t0 = performance.now();
  const writer = await mcapBackend.createWriter(
    path,
    resolveWriterConfig({ compress, cacheSize: CHUNK, syncMode: true }),
    context,
  );
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

async function bagWrite(variants, n, compress, path) {
  const t0 = performance.now();
  // No summary sidecar: it is a read of the whole file after close, not the write path compared here (as in
  // integrity.bench.mjs); with it, 300k frames of 64 B took 361 ms instead of about 60.
  const writer = await BagWriter.create(path, {
    compress,
    cacheSize: CHUNK,
    syncMode: true,
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

/** BagWriter's default (worker) mode, lossless: `await writer.write(frame)` per frame; zstd chunks of ≥ 1 MiB are
 * compressed on a thread of their own there. */
async function bagWorkerWrite(variants, n, compress, path) {
  const t0 = performance.now();
  const writer = await BagWriter.create(path, {
    compress,
    cacheSize: CHUNK,
    startTimestamp: context.startTimestamp,
    summary: false,
  });
  for (let i = 0; i < n; i++) {
    await writer.write({
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

async function mcapWrite(variants, n, compress, path) {
  const t0 = performance.now();
  const fd = openSync(path, 'w');
  let position = 0n;
  const writable = {
    async write(buffer) {
      let done = 0;
      while (done < buffer.length) done += writeSync(fd, buffer, done, buffer.length - done);
      position += BigInt(buffer.length);
    },
    position: () => position,
  };
  const writer = new McapWriter({
    writable,
    chunkSize: CHUNK,
    ...(compress === 'zstd'
      ? { compressChunk: (data) => ({ compression: 'zstd', compressedData: zstd.compress(data, ZSTD_LEVEL) }) }
      : {}),
  });
  await writer.start({ profile: 'vlink', library: 'mcap-ts bench' });
  const channelId = await writer.registerChannel({
    topic: URL,
    messageEncoding: 'raw',
    schemaId: 0,
    metadata: new Map([['action', 'Pub']]),
  });
  for (let i = 0; i < n; i++) {
    const t = START_NS + BigInt(i * 100_000);
    await writer.addMessage({
      channelId,
      sequence: i + 1,
      logTime: t,
      publishTime: t,
      data: variants[i % variants.length],
    });
  }
  await writer.end();
  fsyncSync(fd);
  closeSync(fd);
  return performance.now() - t0;
}

async function rawWrite(variants, n, _compress, path) {
  const t0 = performance.now();
  const fd = openSync(path, 'w');
  for (let i = 0; i < n; i++) {
    const data = variants[i % variants.length];
    let done = 0;
    while (done < data.length) done += writeSync(fd, data, done, data.length - done);
  }
  fsyncSync(fd);
  closeSync(fd);
  return performance.now() - t0;
}

// --- readers -----------------------------------------------------------------------------------------------------

async function oursRead(path) {
  const t0 = performance.now();
  const reader = await mcapBackend.openReader(path, { readOnly: true });
  let count = 0;
  let bytes = 0;
  for (const frame of reader.frames({})) {
    count++;
    bytes += frame.data.length + frame.data[0];
  }
  reader.close();
  return { ms: performance.now() - t0, count, bytes };
}

async function mcapRead(path) {
  const t0 = performance.now();
  const fd = openSync(path, 'r');
  const size = BigInt(statSync(path).size);
  const readable = {
    size: async () => size,
    async read(offset, length) {
      const out = new Uint8Array(Number(length));
      let done = 0;
      while (done < out.length) done += readSync(fd, out, done, out.length - done, Number(offset) + done);
      return out;
    },
  };
  const reader = await McapIndexedReader.Initialize({
    readable,
    decompressHandlers: { zstd: (buffer, decompressedSize) => zstd.decompress(buffer, Number(decompressedSize)) },
  });
  let count = 0;
  let bytes = 0;
  for await (const message of reader.readMessages()) {
    count++;
    bytes += message.data.length + message.data[0];
  }
  closeSync(fd);
  return { ms: performance.now() - t0, count, bytes };
}

// --- compression alone --------------------------------------------------------------------------------------------

/**
 * The floor zstd sets on a writer's time: the case's payload bytes, in chunks of CHUNK bytes filled as the writers
 * fill theirs, compressed at ZSTD_LEVEL on this thread and nothing else (median of REPS), with our codec (native zstd
 * where the runtime has one, see zstd-compress.ts) and with McapWriter's (@foxglove/wasm-zstd). Our writers compress on
 * at most two threads (the caller's and the compressor thread), so no writer of ours can take less than `oursMs / 2`
 * on a machine with two cores or more: `zstdCeilingVsMcapWriter` is how far above McapWriter that floor is, the most
 * any of our contenders could reach.
 */
async function compressionAlone(variants, payloadBytes) {
  const codec = (await loadCodecs()).zstd;
  const chunk = new Uint8Array(CHUNK);
  for (let at = 0, i = 0; at < CHUNK; i++) {
    const v = variants[i % variants.length].subarray(0, CHUNK - at);
    chunk.set(v, at);
    at += v.length;
  }
  const chunks = Math.ceil(payloadBytes / CHUNK);
  const scale = payloadBytes / (chunks * CHUNK);
  const time = (compressChunk) => {
    compressChunk(chunk); // warm
    const runs = [];
    for (let rep = 0; rep < REPS; rep++) {
      const t0 = performance.now();
      for (let c = 0; c < chunks; c++) compressChunk(chunk);
      runs.push((performance.now() - t0) * scale);
    }
    return round(median(runs));
  };
  return {
    oursMs: time((data) => codec.compress(data, ZSTD_LEVEL)),
    mcapCodecMs: time((data) => zstd.compress(data, ZSTD_LEVEL)),
    threads: Math.min(2, cpus().length),
  };
}

// --- driver ------------------------------------------------------------------------------------------------------

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

const writers = {
  ours: oursWrite,
  ...(BagWriter ? { bag: bagWrite, bagWorker: bagWorkerWrite } : {}),
  mcapWriter: mcapWrite,
  rawFs: rawWrite,
};
/** What each contender does, for the results and BENCHMARKS.md. */
const CONTENDERS = {
  ours: 'Backend writer (mcapBackend.createWriter) driven directly: chunk + data-section CRCs (the default; see crc32 for the implementation), 4 MiB chunks, big payloads written around the chunk buffer, zstd chunks (≥ 1 MiB) compressed on the caller thread’s compressor thread and on the caller’s thread while its two slots are taken, fsync at close',
  bag: 'BagWriter { syncMode: true, summary: false }: the Backend writer plus the core’s frame checks, same CRCs/chunks/compression, fsync at close',
  bagWorker:
    'BagWriter default (worker) mode but no summary sidecar, `await writer.write()` per frame: payloads copied to the writer thread, same CRCs/chunks, zstd chunks compressed on a thread of their own, fsync at close',
  mcapWriter:
    '@mcap/core McapWriter over writeSync: its defaults (chunk CRCs and the data-section CRC), 4 MiB chunks built in memory, zstd (@foxglove/wasm-zstd, same level) on the caller’s thread, fsync at close',
  rawFs: 'fs.writeSync of each payload as it is (no framing, no CRC, no compression), fsync at close',
};
const readers = { ours: oursRead, mcapIndexedReader: mcapRead };
const results = [];

for (const { size, frames } of CASES) {
  const variants = Array.from({ length: size >= MiB ? 4 : 16 }, (_, i) => payload(size, i + 1));
  const payloadBytes = size * frames;
  for (const compress of COMPRESSIONS) {
    const times = Object.fromEntries(Object.keys(writers).map((k) => [k, []]));
    const reads = Object.fromEntries(Object.keys(readers).map((k) => [k, []]));
    const sizes = {};
    const names = Object.keys(writers);
    // Warm-up (JIT, page cache, wasm): one small untimed pass of each writer.
    for (const name of names) {
      const p = nextPath(`warm-${name}`);
      await writers[name](variants, Math.max(1, Math.floor(frames / 10)), compress, p);
      rmSync(p, { force: true });
    }
    for (let rep = 0; rep < REPS; rep++) {
      const order = names.map((_, i) => names[(i + rep) % names.length]);
      for (const name of order) {
        const p = nextPath(name);
        times[name].push(await writers[name](variants, frames, compress, p));
        sizes[name] = statSync(p).size;
        rmSync(p, { force: true });
      }
    }
    const zstdAlone = compress === 'zstd' ? await compressionAlone(variants, payloadBytes) : undefined;
    const readPath = nextPath('read');
    await oursWrite(variants, frames, compress, readPath);
    const readNames = Object.keys(readers);
    let check;
    for (let rep = 0; rep < REPS + 1; rep++) {
      const order = readNames.map((_, i) => readNames[(i + rep) % readNames.length]);
      for (const name of order) {
        const r = await readers[name](readPath);
        if (r.count !== frames) throw new Error(`${name} read ${r.count} of ${frames} frames`);
        if (check !== undefined && r.bytes !== check) throw new Error(`${name} read different bytes`);
        check = r.bytes;
        if (rep > 0) reads[name].push(r.ms); // the first round warms up
      }
    }
    rmSync(readPath, { force: true });

    const write = Object.fromEntries(
      Object.entries(times).map(([k, v]) => [
        k,
        {
          ms: round(median(v)),
          MBps: round(payloadBytes / MiB / (median(v) / 1000), 1),
          fileBytes: sizes[k],
          runs: v.map((x) => round(x)),
        },
      ]),
    );
    const read = Object.fromEntries(
      Object.entries(reads).map(([k, v]) => [
        k,
        { ms: round(median(v)), MBps: round(payloadBytes / MiB / (median(v) / 1000), 1), runs: v.map((x) => round(x)) },
      ]),
    );
    const ratios = {
      oursWriteVsMcapWriter: round(write.mcapWriter.ms / write.ours.ms),
      oursWriteVsRawFs: round(write.rawFs.ms / write.ours.ms),
      ...(write.bag
        ? {
            bagWriteVsMcapWriter: round(write.mcapWriter.ms / write.bag.ms),
            bagWriteVsRawFs: round(write.rawFs.ms / write.bag.ms),
            bagWorkerWriteVsMcapWriter: round(write.mcapWriter.ms / write.bagWorker.ms),
            bagWorkerWriteVsRawFs: round(write.rawFs.ms / write.bagWorker.ms),
          }
        : {}),
      oursReadVsMcapIndexedReader: round(read.mcapIndexedReader.ms / read.ours.ms),
      ...(zstdAlone
        ? { zstdCeilingVsMcapWriter: round(write.mcapWriter.ms / (zstdAlone.oursMs / zstdAlone.threads)) }
        : {}),
    };
    const entry = { size, compress, frames, payloadBytes, write, read, ratios, ...(zstdAlone ? { zstdAlone } : {}) };
    results.push(entry);
    console.log(
      `${String(size).padStart(7)} B ${compress.padEnd(4)} ${String(frames).padStart(7)} frames | write ms: ` +
        Object.entries(write)
          .map(([k, v]) => `${k} ${v.ms}`)
          .join(', ') +
        ` | read ms: ` +
        Object.entries(read)
          .map(([k, v]) => `${k} ${v.ms}`)
          .join(', ') +
        ` | ${JSON.stringify(ratios)}`,
    );
  }
}

const find = (size, compress) => results.find((r) => r.size === size && r.compress === compress).ratios;
const goals = {
  'write ≥ 3× McapWriter at 1 MiB (none)': find(MiB, 'none').oursWriteVsMcapWriter >= 3,
  'write ≥ 3× McapWriter at 1 MiB (zstd)': find(MiB, 'zstd').oursWriteVsMcapWriter >= 3,
  'write ≥ 75 % of raw fs at 1 MiB (none)': find(MiB, 'none').oursWriteVsRawFs >= 0.75,
  'write ≥ 3× McapWriter at 64 B (none)': find(64, 'none').oursWriteVsMcapWriter >= 3,
  'write ≥ 3× McapWriter at 64 B (zstd)': find(64, 'zstd').oursWriteVsMcapWriter >= 3,
  'read ≥ 2× McapIndexedReader at 64 B (none)': find(64, 'none').oursReadVsMcapIndexedReader >= 2,
  'read ≥ 1.5× McapIndexedReader at 1 MiB (none)': find(MiB, 'none').oursReadVsMcapIndexedReader >= 1.5,
};
console.log(goals);

const out = {
  bench: 'vcap',
  runtime,
  runtimeVersion,
  date: new Date().toISOString(),
  machine: { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, tmpdir: tmpdir() },
  crc32: CRC32_IMPLEMENTATION, // which CRC-32 our writer used (mcap/crc32.ts)
  zstd: ZSTD_IMPLEMENTATION, // which zstd compressed our chunks (compress/zstd-compress.ts)
  reps: REPS,
  quick,
  chunkSize: CHUNK,
  zstdLevel: ZSTD_LEVEL,
  contenders: CONTENDERS,
  results,
  goals,
};
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
writeFileSync(join(resultsDir, `vcap-${runtime}.json`), `${JSON.stringify(out, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
