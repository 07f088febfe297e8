#!/usr/bin/env node
// `npm run demo`: record a sample bag with the default embedded SQLite backend (.vdb), replay it at 10× speed,
// then serve its directory over HTTP (REST, WebSocket replay, Foxglove endpoint, web player) until Ctrl-C.
// `--once` (or CI=true) serves, checks one request and exits.
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ActionType, BagReader, BagWriter, SchemaType, analyzeTiming } from '../packages/bag/dist/index.js';
import { serve } from '../packages/http-api/dist/index.js';

const root = resolve(import.meta.dirname, '..');
const dir = join(root, 'demo-output');
const path = join(dir, 'sample.vdb');
const once = process.argv.includes('--once') || process.env.CI === 'true';
mkdirSync(dir, { recursive: true });

// 1. Record 10 s of a small robot: IMU at 100 Hz (JSON), a 10 Hz lidar with a 0.3 s dropout, 1 Hz control commands.
const encoder = new TextEncoder();
const writer = await BagWriter.create(path, { compress: 'auto', tagName: 'demo' });
let pushed = 0;
for (let t = 0; t < 10_000_000; t += 10_000) {
  const imu = { t, ax: Math.sin(t / 1e6), ay: Math.cos(t / 1e6), az: 9.81 };
  pushed +=
    writer.push({
      timestamp: t,
      url: 'dds://imu',
      data: encoder.encode(JSON.stringify(imu)),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    }) >= 0
      ? 1
      : 0;
  if (t % 100_000 === 0 && !(t >= 4_000_000 && t < 4_300_000)) {
    const points = new Uint8Array(16 * 1024).map((_, i) => (i * 7 + t / 100_000) & 0xff);
    pushed +=
      writer.push({
        timestamp: t,
        url: 'dds://lidar/top',
        data: points,
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      }) >= 0
        ? 1
        : 0;
  }
  if (t % 1_000_000 === 0) {
    const cmd = { speed: 1 + t / 1e7, steer: 0.1 };
    pushed +=
      writer.push({
        timestamp: t,
        url: 'dds://control/cmd',
        data: encoder.encode(JSON.stringify(cmd)),
        serType: 'json',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Set,
      }) >= 0
        ? 1
        : 0;
  }
}
await writer.close();
console.log(`recorded ${pushed} frames to ${path}`);

// 2. Inspect and replay at 10× speed.
const reader = await BagReader.create(path);
const info = reader.getInfo();
console.log(
  `info: ${info.messageCount} messages, ${info.totalDuration} ms, ${info.urls.length} urls, compression ${info.compressionType}`,
);
for (const url of await analyzeTiming(reader, { factor: 3 })) {
  for (const gap of url.gaps)
    console.log(`gap in ${url.url}: ${(gap.lengthUs / 1000).toFixed(0)} ms at ${(gap.startUs / 1e6).toFixed(2)} s`);
}
const started = performance.now();
let replayed = 0;
for await (const _frame of reader.play({ rate: 10 })) replayed++;
console.log(`replayed ${replayed} frames at 10x in ${((performance.now() - started) / 1000).toFixed(2)} s`);
reader.close();

// 3. Serve the directory.
const server = await serve({ root: dir, host: '127.0.0.1', port: once ? 0 : 8765 });
const bags = await (await fetch(`${server.url}/v1/bags`)).json();
console.log(`serving ${dir} at ${server.url}`);
console.log(`  ${server.url}/v1/bags -> ${JSON.stringify(bags.bags?.map?.((b) => b.id) ?? bags)}`);
console.log(
  `  web player: ${server.url}/   API docs: ${server.url}/v1/docs   Foxglove: ws://127.0.0.1:${server.port}/v1/bags/sample.vdb/foxglove`,
);
if (once) {
  await server.close();
} else {
  console.log('Ctrl-C to stop');
  process.on('SIGINT', () => server.close().then(() => process.exit(0)));
}
