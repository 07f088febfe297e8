// Merge three recordings into one with BagProcessor: each recording has its own start (wall clock), so frames are
// pushed with their data-plane time (recording start + frame time, µs since the epoch) and come out in that order
// on one strictly increasing timeline. This is what `vlink-bag merge` does.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BagProcessor, BagReader, BagWriter, createFrame, SchemaType } from '@vlink/bag';

const dir = mkdtempSync(join(tmpdir(), 'vlink-example-merge-'));
const base = Date.UTC(2026, 0, 1, 12, 0, 0); // ms since the epoch

// Three recordings started 0, 130 and 270 ms apart (mixed formats), 20 frames at 20 Hz each.
const inputs = [
  { path: join(dir, 'front.vdb'), url: 'camera/front', startMs: base },
  { path: join(dir, 'rear.vcap'), url: 'camera/rear', startMs: base + 130 },
  { path: join(dir, 'lidar.vdb'), url: 'lidar', startMs: base + 270 },
];
for (const input of inputs) {
  const writer = await BagWriter.create(input.path, { syncMode: true, startTimestamp: input.startMs });
  for (let k = 0; k < 20; k++) {
    writer.push(
      createFrame({
        url: input.url,
        serType: 'raw',
        schemaType: SchemaType.Raw,
        timestamp: 10_000 + k * 50_000,
        data: new Uint8Array([k]),
      }),
    );
  }
  await writer.close();
}

// The merged bag starts at the earliest recording start, so every frame keeps its place in absolute time.
const out = join(dir, 'merged.vdb');
const writer = await BagWriter.create(out, { syncMode: true, startTimestamp: base });
const processor = new BagProcessor({ minCacheTime: 500 }); // a 500 ms reorder window
processor.registerOutputCallback((frame) => writer.push(frame)); // frame.timestamp is on the output timeline

const readers = await Promise.all(inputs.map((input) => BagReader.create(input.path)));
const startsUs = readers.map((reader) => reader.getInfo().startTimestamp * 1000);
for (const reader of readers) reader.openCursor();
// Round robin over the inputs, as a live system would deliver them: the processor puts them in data-time order.
for (let more = true; more; ) {
  more = false;
  for (const [i, reader] of readers.entries()) {
    const frame = reader.next();
    if (!frame) continue;
    more = true;
    // push copies the payload (copyData defaults to true): the reader may reuse its buffer afterwards.
    if (!processor.push(startsUs[i]! + frame.timestamp, frame)) await processor.waitForRoom(); // backpressure
  }
  await processor.idle(); // let it release what the window allows
}
processor.flush(); // everything still held goes out, in order
processor.close();
await writer.close();
for (const reader of readers) reader.close();

// Check: all 60 frames, strictly increasing, each at (its recording's offset from the earliest start + its time).
const merged = await BagReader.create(out);
const frames: Array<[string, number]> = [];
for await (const frame of merged.frames()) frames.push([frame.url, frame.timestamp]);
merged.close();
console.log(
  `merged ${frames.length} frames: ${frames
    .slice(0, 5)
    .map(([u, t]) => `${u}@${t}`)
    .join(' ')} …`,
);
assert.equal(frames.length, 60);
for (let i = 1; i < frames.length; i++) assert.ok(frames[i]![1] > frames[i - 1]![1], 'strictly increasing');
const expected = inputs
  .flatMap((input) =>
    Array.from({ length: 20 }, (_, k): [string, number] => [
      input.url,
      (input.startMs - base) * 1000 + 10_000 + k * 50_000,
    ]),
  )
  .sort((a, b) => a[1] - b[1]);
assert.deepEqual(frames, expected);

rmSync(dir, { recursive: true, force: true });
console.log('merge: ok');
