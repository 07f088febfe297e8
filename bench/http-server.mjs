#!/usr/bin/env node
// Child process of bench/http.bench.mjs: serves a root with @vlink/bag-server (or a raw TCP sender for the loopback
// baseline) so the server and the measuring client never share an event loop.
//
// Also the server of bench/health.bench.mjs (--workers, --deadline, --hang, --quiet).
//
//   <runtime> bench/http-server.mjs --root DIR [--cache N]     → prints {"port":…} then {"rss":…} every 250 ms
//     [--workers N]   bag worker threads (0: bag work on the event loop)
//     [--deadline MS] the open deadline (deadlines.openMs)
//     [--hang]        registers the test backend whose .hang bags never open (packages/http-api/dist-test/testing)
//     [--quiet]       no RSS lines
//   <runtime> bench/http-server.mjs --raw BYTES --chunk BYTES   → TCP server writing BYTES per connection
import { createServer } from 'node:net';
import { registerBackend } from '../packages/bag/dist/index.js';
import { serve } from '../packages/http-api/dist/index.js';

const args = process.argv.slice(2);
const arg = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

if (arg('--raw')) {
  // The floor for any HTTP or WebSocket transfer of the same bytes: a plain loopback socket write loop with 'drain'.
  const total = Number(arg('--raw'));
  const chunkSize = Number(arg('--chunk') ?? 1024 * 1024);
  const chunk = new Uint8Array(chunkSize).map((_, i) => i & 0xff);
  const server = createServer((socket) => {
    let left = total;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunkSize);
        left -= n;
        // A fresh copy per write, as the API copies each payload out of the reader.
        if (!socket.write(chunk.slice(0, n))) return socket.once('drain', pump);
      }
      socket.end();
    };
    pump();
  });
  server.listen(0, '127.0.0.1', () => say({ port: server.address().port }));
} else {
  const cache = arg('--cache');
  const workers = arg('--workers');
  const deadline = arg('--deadline');
  if (args.includes('--hang'))
    registerBackend((await import('../packages/http-api/dist-test/testing/hang-backend.js')).hangBackend);
  const server = await serve({
    root: arg('--root'),
    port: 0,
    ...(cache === undefined ? {} : { readerCache: Number(cache) }),
    ...(workers === undefined ? {} : { workers: Number(workers) }),
    ...(deadline === undefined ? {} : { deadlines: { openMs: Number(deadline) } }),
  });
  say({ port: server.port, runtime: server.runtime });
  if (args.includes('--quiet')) await new Promise(() => {});
  // Heap after a full GC (when the runtime lets us force one) separates a leak from garbage not yet collected.
  const gc = typeof Bun !== 'undefined' ? () => Bun.gc(true) : globalThis.gc;
  let ticks = 0;
  setInterval(() => {
    if (gc && ++ticks % 4 === 0) gc();
    const { rss, heapUsed } = process.memoryUsage();
    say({ rss, heap: heapUsed, gc: Boolean(gc) && ticks % 4 === 0 });
  }, 250);
}
