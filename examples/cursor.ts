// Reading without pacing: the synchronous cursor (VLink's read_next) and the async iterator, both with url and time
// filters, plus the per-url timing analysis that finds gaps.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyzeTiming, BagReader, BagWriter, createFrame, SchemaType } from '@vlink/bag';

const dir = mkdtempSync(join(tmpdir(), 'vlink-example-cursor-'));
const path = join(dir, 'sensors.vdb');

// 10 s of a 10 Hz camera and a 100 Hz imu; the camera misses 0.5 s at t = 4 s.
const writer = await BagWriter.create(path, { syncMode: true });
for (let t = 0; t < 10_000_000; t += 10_000) {
  writer.push(
    createFrame({ url: 'imu', serType: 'raw', schemaType: SchemaType.Raw, timestamp: t, data: new Uint8Array(32) }),
  );
  if (t % 100_000 === 0 && !(t >= 4_000_000 && t < 4_500_000)) {
    writer.push(
      createFrame({
        url: 'camera',
        serType: 'raw',
        schemaType: SchemaType.Raw,
        timestamp: t,
        data: new Uint8Array(1024).fill(t / 100_000),
      }),
    );
  }
}
await writer.close();

const reader = await BagReader.create(path);

// 1. The cursor: synchronous, one frame at a time. Window bounds are ms since recording start, both inclusive.
reader.openCursor({ filterUrls: ['camera'], beginTime: 1000, endTime: 2000 });
const kept: Uint8Array[] = [];
for (let frame = reader.next(); frame; frame = reader.next()) {
  kept.push(frame.data.slice()); // data is a view valid until the next read: copy what you keep
}
assert.ok(!reader.fail(), `cursor failed: ${reader.getLastError()?.message}`);
assert.equal(kept.length, 11); // 1.0, 1.1, …, 2.0 s
assert.equal(kept[0]![0], 10);

// 2. The async iterator: same filters, yields to the event loop now and then.
let imu = 0;
for await (const frame of reader.frames({ filterUrls: ['imu'], beginTime: 9000 })) {
  assert.ok(frame.timestamp >= 9_000_000);
  imu++;
}
assert.equal(imu, 100);

// 3. Timing analysis: rate, interval percentiles and gaps per url.
const timing = await analyzeTiming(reader);
for (const t of timing)
  console.log(`${t.url}: ${t.count} frames, ${t.rateHz.toFixed(1)} Hz, gaps ${JSON.stringify(t.gaps)}`);
const camera = timing.find((t) => t.url === 'camera')!;
assert.equal(camera.gaps.length, 1);
assert.equal(camera.gaps[0]!.startUs, 3_900_000);
assert.equal(camera.gaps[0]!.lengthUs, 600_000);
assert.equal(timing.find((t) => t.url === 'imu')!.gaps.length, 0);

reader.close();
rmSync(dir, { recursive: true, force: true });
console.log('cursor: ok');
