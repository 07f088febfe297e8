#!/usr/bin/env node
// @vlink/bag-server throughput and stability, with the server in a child process (same runtime) and the client here:
//   1. NDJSON messages/s for 64 B frames (goal ≥ 100k msg/s), and the JSON-page and binary-stream rates beside it;
//   2. MB/s for 1 MiB frames: binary stream (.vdb and .vcap) and WebSocket replay at rate 0 (goal ≥ 300 MB/s),
//      against a loopback raw-socket copy of the same number of bytes;
//   3. reader cache (LRU of open readers, the default) versus opening a reader per request: small-request rates;
//   4. 100 concurrent paced replay clients for 30 s (3 s with --quick): server RSS sampled every 250 ms must not grow;
//      and one client that stops reading a rate-0 replay: the server must not buffer the recording.
// Results: bench/results/http-<runtime>.json.
//
//   node bench/http.bench.mjs [--quick]       bun bench/http.bench.mjs [--quick]      (build the packages first)
//   --smoke: tiny bags, one rep, a 2 s soak, only to check the harness works; results go to bench/results/smoke/.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { Agent, get as httpGet } from 'node:http';
import { connect } from 'node:net';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ActionType, BagWriter, SchemaType } from '../packages/bag/dist/index.js';
import { payload } from './lib/payload.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const smoke = args.includes('--smoke');
const runtime = typeof Bun !== 'undefined' ? 'bun' : typeof Deno !== 'undefined' ? 'deno' : 'node';
const here = dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;
const REPS = smoke ? 1 : quick ? 2 : 3;
const SMALL_FRAMES = smoke ? 5_000 : quick ? 100_000 : 300_000;
const BIG_FRAMES = smoke ? 8 : quick ? 96 : 256;
const CLIENTS = 100;
const SOAK_S = smoke ? 2 : quick ? 3 : 30;

// ---------------------------------------------------------------------------------------------------------------
// Bags (cached in bench/tmp/http between runs)
const dir = join(here, 'tmp', `http-${SMALL_FRAMES}-${BIG_FRAMES}`);
mkdirSync(dir, { recursive: true });

async function writeBag(name, count, make) {
  const path = join(dir, name);
  if (existsSync(`${path}.done`)) return;
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: 1_773_712_800_123 });
  for (let i = 0; i < count; i++) writer.push(make(i));
  await writer.close();
  writeFileSync(`${path}.done`, '');
}

const small = Array.from({ length: 16 }, (_, i) => payload(64, i + 1));
const big = Array.from({ length: 4 }, (_, i) => payload(MiB, i + 1));
const frame = (timestamp, url, data) => ({
  timestamp,
  url,
  data,
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
});
console.log(`preparing bags in ${dir} …`);
await writeBag('small.vdb', SMALL_FRAMES, (i) => frame(1000 + i * 10, `dds://s${i % 5}`, small[i % 16]));
await writeBag('big.vdb', BIG_FRAMES, (i) => frame(1000 + i * 10_000, 'shm://big', big[i % 4]));
await writeBag('big.vcap', BIG_FRAMES, (i) => frame(1000 + i * 10_000, 'shm://big', big[i % 4]));
// 5 urls × 40 Hz for 10 s: 200 messages/s per paced replay client, 20k/s over 100 clients.
await writeBag('replay-200hz.vdb', 2000, (i) =>
  frame(1000 + Math.floor(i / 5) * 25_000 + (i % 5), `dds://r${i % 5}`, payload(64 + (i % 4) * 64, i)),
);

// ---------------------------------------------------------------------------------------------------------------
// Child processes
const children = [];
function startChild(childArgs) {
  // The soak compares heap after a forced GC; Deno exposes gc() only with the V8 flag (Bun has Bun.gc).
  const flags =
    runtime === 'node' ? ['--expose-gc'] : runtime === 'deno' ? ['run', '-A', '--v8-flags=--expose-gc'] : [];
  const child = spawn(process.execPath, [...flags, join(here, 'http-server.mjs'), ...childArgs], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const state = { rss: [], port: 0 };
  let buffered = '';
  const ready = new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`server child exited (${code})`)));
    child.stdout.on('data', (data) => {
      buffered += data.toString();
      let nl;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const msg = JSON.parse(buffered.slice(0, nl));
        buffered = buffered.slice(nl + 1);
        if (msg.port) {
          state.port = msg.port;
          resolve(state);
        }
        if (msg.rss) state.rss.push({ t: performance.now(), rss: msg.rss, heap: msg.heap, gc: msg.gc });
      }
    });
  });
  state.stop = () => child.kill();
  return ready;
}
process.on('exit', () =>
  children.forEach((c) => {
    c.kill();
  }),
);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

async function timed(fn) {
  const values = [];
  for (let r = 0; r < REPS; r++) values.push(await fn());
  // Best-of beside the median: the machine is shared, and interference only ever slows a run down.
  return { median: round(median(values)), best: round(Math.max(...values)), all: values.map((v) => round(v)) };
}

/**
 * GETs a stream with node:http (undici's fetch costs more client CPU than the server spends on 1 MiB frames, which
 * would measure the client), counting bytes and newlines.
 */
function streamGet(url) {
  return new Promise((resolve, reject) => {
    httpGet(url, (res) => {
      if (res.statusCode !== 200) {
        // The server's answer says why (busy, deadline, …): keep it in the error.
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => reject(new Error(`${url}: ${res.statusCode} ${text.slice(0, 300)}`)));
        return;
      }
      let bytes = 0;
      let lines = 0;
      res.on('data', (value) => {
        bytes += value.length;
        for (let i = value.indexOf(10); i >= 0; i = value.indexOf(10, i + 1)) lines++;
      });
      res.on('end', () => resolve({ bytes, lines }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

async function httpRate(base, path, unit) {
  return timed(async () => {
    const t0 = performance.now();
    const { bytes, lines } = await streamGet(base + path);
    const s = (performance.now() - t0) / 1000;
    return unit === 'lines' ? lines / s : bytes / MiB / s;
  });
}

async function jsonPagesRate(base, id) {
  return timed(async () => {
    const t0 = performance.now();
    let n = 0;
    let cursor = null;
    do {
      const res = await fetch(`${base}/v1/bags/${id}/messages?limit=10000${cursor ? `&cursor=${cursor}` : ''}`);
      const body = await res.json();
      n += body.messages.length;
      cursor = body.next;
    } while (cursor);
    return n / ((performance.now() - t0) / 1000);
  });
}

async function WebSocketClass() {
  if (typeof Bun !== 'undefined' || typeof Deno !== 'undefined') return globalThis.WebSocket;
  return (await import('ws')).WebSocket;
}
const WS = await WebSocketClass();

function openSocket(url) {
  return new Promise((resolve, reject) => {
    const ws = new WS(url);
    ws.binaryType = 'arraybuffer';
    ws.onopen = () => resolve(ws);
    ws.onerror = () => reject(new Error(`cannot connect ${url}`));
  });
}

async function wsRate0(base, id) {
  return timed(async () => {
    const ws = await openSocket(`${base.replace('http', 'ws')}/v1/bags/${id}/replay`);
    let bytes = 0;
    const t0 = performance.now();
    await new Promise((resolve) => {
      ws.onmessage = (event) => {
        if (typeof event.data === 'string') {
          if (JSON.parse(event.data).event === 'finished') resolve();
        } else bytes += event.data.byteLength;
      };
      ws.send(JSON.stringify({ op: 'play', rate: 0 }));
    });
    const s = (performance.now() - t0) / 1000;
    ws.close();
    return bytes / MiB / s;
  });
}

async function rawRate(total) {
  const raw = await startChild(['--raw', String(total), '--chunk', String(MiB)]);
  const result = await timed(
    () =>
      new Promise((resolve, reject) => {
        const t0 = performance.now();
        let bytes = 0;
        const socket = connect(raw.port, '127.0.0.1');
        socket.on('data', (d) => (bytes += d.length));
        socket.on('end', () => resolve(bytes / MiB / ((performance.now() - t0) / 1000)));
        socket.on('error', reject);
      }),
  );
  raw.stop();
  return result;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 8 });
function request(url) {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: keepAlive }, (res) => {
      res.on('data', () => {});
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`${url}: ${res.statusCode}`))));
    }).on('error', reject);
  });
}

/** Requests/s with 8 concurrent keep-alive clients for `ms`. */
async function requestRate(url, ms) {
  let n = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < end) {
        await request(url);
        n++;
      }
    }),
  );
  return n / (ms / 1000);
}

/** Cached and per-request servers measured in alternating rounds, so background load hits both alike. */
async function compareCache(cachedBase, uncachedBase, path) {
  const cached = [];
  const perRequest = [];
  for (let r = 0; r < REPS + 1; r++) {
    cached.push(await requestRate(cachedBase + path, smoke ? 100 : quick ? 500 : 1500));
    perRequest.push(await requestRate(uncachedBase + path, smoke ? 100 : quick ? 500 : 1500));
  }
  // The first round warms both servers up.
  return { cached: round(median(cached.slice(1))), perRequest: round(median(perRequest.slice(1))) };
}

async function soak(base, server) {
  const sockets = await Promise.all(
    Array.from({ length: CLIENTS }, () => openSocket(`${base.replace('http', 'ws')}/v1/bags/replay-200hz.vdb/replay`)),
  );
  const received = new Array(CLIENTS).fill(0);
  const dropped = new Array(CLIENTS).fill(0);
  sockets.forEach((ws, i) => {
    ws.onmessage = (event) => {
      if (typeof event.data !== 'string') received[i]++;
      else {
        const e = JSON.parse(event.data);
        if (typeof e.dropped === 'number') dropped[i] = e.dropped;
      }
    };
    ws.send(JSON.stringify({ op: 'play', rate: 1, times: 0 }));
  });
  const t0 = performance.now();
  const tEnd = t0 + SOAK_S * 1000;
  // Compare the second quarter of the run with the last quarter: both past warm-up, far enough apart to see a trend.
  await new Promise((r) => setTimeout(r, SOAK_S * 1000));
  const total = received.reduce((a, b) => a + b, 0);
  const healthy = (await fetch(`${base}/v1/health`)).status === 200;
  for (const ws of sockets) ws.close();
  await new Promise((r) => setTimeout(r, 2500));
  const mb = (x) => round(x / MiB);
  const span = (from, to) => server.rss.filter((s) => s.t >= t0 + from * (tEnd - t0) && s.t <= t0 + to * (tEnd - t0));
  const early = span(0.25, 0.5);
  const late = span(0.75, 1);
  const gcHeap = (xs) => {
    const g = xs.filter((s) => s.gc).map((s) => s.heap);
    return g.length ? median(g) : median(xs.map((s) => s.heap));
  };
  const after = server.rss.filter((s) => s.t > tEnd + 1500);
  const rssGrowth = median(late.map((s) => s.rss)) - median(early.map((s) => s.rss));
  const heapGrowth = gcHeap(late) - gcHeap(early);
  return {
    clients: CLIENTS,
    seconds: SOAK_S,
    messagesPerClientPerS: round(total / CLIENTS / SOAK_S),
    expectedPerClientPerS: 200,
    totalDropped: dropped.reduce((a, b) => a + b, 0),
    rssMiB: {
      secondQuarter: mb(median(early.map((s) => s.rss))),
      lastQuarter: mb(median(late.map((s) => s.rss))),
      max: mb(Math.max(...server.rss.map((s) => s.rss))),
    },
    heapAfterGcMiB: {
      secondQuarter: mb(gcHeap(early)),
      lastQuarter: mb(gcHeap(late)),
      twoSecondsAfterClose: after.length ? mb(gcHeap(after)) : null,
    },
    serverStillHealthy: healthy,
    noLeak: healthy && rssGrowth < 32 * MiB && heapGrowth < 16 * MiB,
  };
}

/**
 * A WebSocket client that asks for a rate-0 replay of the 1 MiB-frame bag and then never reads: the server must hold
 * at most its send bound (8 MiB) plus socket buffers, not the recording.
 */
async function stalledClient(base, server) {
  const port = Number(new URL(base).port);
  const sock = connect(port, '127.0.0.1');
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.write(
    'GET /v1/bags/big.vcap/replay HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
  );
  await new Promise((resolve) => setTimeout(resolve, 300));
  const before = median(server.rss.slice(-4).map((s) => s.rss));
  const payload = new TextEncoder().encode(JSON.stringify({ op: 'play', rate: 0 }));
  const frame = new Uint8Array(6 + payload.length);
  frame[0] = 0x81; // FIN + text
  frame[1] = 0x80 | payload.length; // masked (all-zero mask), short length
  frame.set(payload, 6);
  sock.write(frame);
  sock.pause();
  const t0 = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const during = server.rss.filter((s) => s.t > t0).map((s) => s.rss);
  sock.destroy();
  return {
    recordingMiB: BIG_FRAMES,
    serverRssGrowthMiB: round((Math.max(...during) - before) / MiB),
    bounded: Math.max(...during) - before < 64 * MiB,
  };
}

// ---------------------------------------------------------------------------------------------------------------
const server = await startChild(['--root', dir]);
const base = `http://127.0.0.1:${server.port}`;
const results = {
  runtime,
  runtimeVersion: typeof Bun !== 'undefined' ? Bun.version : process.version,
  quick,
  reps: REPS,
  date: new Date().toISOString(),
  loadAverage: loadavg().map((x) => round(x, 2)),
};

console.log(`[${runtime}] NDJSON / JSON / binary, ${SMALL_FRAMES} × 64 B`);
results.smallFrames = {
  frames: SMALL_FRAMES,
  payloadBytes: 64,
  ndjsonMsgPerS: await httpRate(base, '/v1/bags/small.vdb/messages?format=ndjson', 'lines'),
  jsonPagesMsgPerS: await jsonPagesRate(base, 'small.vdb'),
  binaryMiBPerS: await httpRate(base, '/v1/bags/small.vdb/messages?format=binary', 'bytes'),
  goalNdjsonMsgPerS: 100_000,
};
console.log(results.smallFrames);

console.log(`[${runtime}] 1 MiB frames × ${BIG_FRAMES}`);
const bigBytes = BIG_FRAMES * (MiB + 8 + 14 + 'shm://big'.length + 3);
results.bigFrames = {
  frames: BIG_FRAMES,
  payloadBytes: MiB,
  binaryStreamVdbMiBPerS: await httpRate(base, '/v1/bags/big.vdb/messages?format=binary', 'bytes'),
  binaryStreamVcapMiBPerS: await httpRate(base, '/v1/bags/big.vcap/messages?format=binary', 'bytes'),
  wsReplayRate0VdbMiBPerS: await wsRate0(base, 'big.vdb'),
  wsReplayRate0VcapMiBPerS: await wsRate0(base, 'big.vcap'),
  rawLoopbackSocketMiBPerS: await rawRate(bigBytes),
  goalMiBPerS: 300,
};
console.log(results.bigFrames);

console.log(`[${runtime}] a WebSocket client that stops reading`);
results.stalledClient = await stalledClient(base, server);
console.log(results.stalledClient);

console.log(`[${runtime}] reader cache vs a reader per request`);
const uncached = await startChild(['--root', dir, '--cache', '0']);
const ubase = `http://127.0.0.1:${uncached.port}`;
results.readerCache = {
  note: 'requests/s, 8 concurrent keep-alive clients; cached = default LRU of 16 bags with pooled readers, perRequest = readerCache 0',
  infoVdb: await compareCache(base, ubase, '/v1/bags/small.vdb/info'),
  page10Vdb: await compareCache(base, ubase, '/v1/bags/small.vdb/messages?limit=10&begin=500'),
  infoVcap: await compareCache(base, ubase, '/v1/bags/big.vcap/info'),
  firstFrameVcap: await compareCache(base, ubase, '/v1/bags/big.vcap/messages?limit=1&format=binary&end=0.5'),
};
uncached.stop();
console.log(results.readerCache);

console.log(`[${runtime}] ${CLIENTS} paced replay clients for ${SOAK_S} s`);
results.soak = await soak(base, server);
console.log(results.soak);

server.stop();
const resultsDir = join(here, 'results', smoke ? 'smoke' : '');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `http-${runtime}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nwrote ${file}`);
process.exit(0);
