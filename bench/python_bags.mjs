#!/usr/bin/env node
// Bags for bench/python_read.py, written with the TypeScript writer (cached: a `.done` marker per bag).
//   node bench/python_bags.mjs <dir> <smallFrames> <bigFrames>
// small.vcap / small.vdb: 64 B payloads, 5 urls, 100 µs apart; big.vcap / big.vdb: 1 MiB payloads, 10 ms apart.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ActionType, BagWriter, SchemaType } from '../packages/bag/dist/index.js';

const [dir, smallArg, bigArg] = process.argv.slice(2);
const SMALL = Number(smallArg ?? 300_000);
const BIG = Number(bigArg ?? 256);
const MiB = 1024 * 1024;
mkdirSync(dir, { recursive: true });

function payload(size, seed) {
  const out = new Uint8Array(size);
  let x = seed * 2654435761 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

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
for (const ext of ['vcap', 'vdb']) {
  await writeBag(`small.${ext}`, SMALL, (i) => frame(1000 + i * 100, `dds://s${i % 5}`, small[i % 16]));
  await writeBag(`big.${ext}`, BIG, (i) => frame(1000 + i * 10_000, 'shm://big', big[i % 4]));
}
console.log(`bags ready in ${dir}`);
