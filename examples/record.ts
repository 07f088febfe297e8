// Basic recording: a small robot (IMU at 100 Hz, a 10 Hz lidar, an occasional command) into a .vdb bag.
// Run: node examples/dist/record.js  (after `npm run build` and `npx tsc -p examples`)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ActionType, BagReader, BagWriter, createFrame, SchemaType } from '@vlink/bag';

const dir = mkdtempSync(join(tmpdir(), 'vlink-example-record-'));
const path = join(dir, 'drive.vdb'); // the extension picks the format: .vdb (SQLite) or .vcap (MCAP)
const encoder = new TextEncoder();

// `await using` closes the writer even if something below throws. compress 'auto' = LZAV per message for .vdb.
{
  await using writer = await BagWriter.create(path, { compress: 'auto', tagName: 'example' });
  for (let t = 0; t < 2_000_000; t += 10_000) {
    // Timestamps are µs since the recording start. Pass -1 (createFrame's default) to use the writer's clock.
    writer.push(
      createFrame({
        url: 'dds://imu',
        serType: 'json',
        schemaType: SchemaType.Raw,
        timestamp: t,
        data: encoder.encode(JSON.stringify({ t, ax: Math.sin(t / 1e6), az: 9.81 })),
      }),
    );
    if (t % 100_000 === 0) {
      writer.push(
        createFrame({
          url: 'dds://lidar',
          serType: 'raw',
          schemaType: SchemaType.Raw,
          timestamp: t,
          data: new Uint8Array(4096).fill(t % 251),
        }),
      );
    }
    if (t % 500_000 === 0) {
      // Control commands are "Set" actions, as VLink records field writes.
      writer.push(
        createFrame({
          url: 'dds://cmd',
          serType: 'json',
          schemaType: SchemaType.Raw,
          timestamp: t,
          actionType: ActionType.Set,
          data: encoder.encode('{"speed":1}'),
        }),
      );
    }
  }
  // push() never waits for the disk: frames are queued and written by a worker. close() drains the queue.
  // stats().dropped counts refused frames by reason (queue full, closed, …): none here.
  const dropped = Object.values(writer.stats().dropped).reduce((sum, n) => sum + n, 0);
  assert.equal(dropped, 0, 'no frame was refused');
  await writer.close();
}

// Check the result the way a user would: open it and look at the summary.
const reader = await BagReader.create(path);
const info = reader.getInfo();
console.log(
  `${path}: ${info.messageCount} messages, ${info.totalDuration} ms, urls ${info.urls.map((u) => u.url).join(', ')}, compression ${info.compressionType}`,
);
assert.equal(info.messageCount, 200 + 20 + 4);
assert.equal(info.tagName, 'example');
assert.equal(info.hasCompleted, true);
assert.deepEqual(info.urls.map((u) => u.url).sort(), ['dds://cmd', 'dds://imu', 'dds://lidar']);
reader.close();
rmSync(dir, { recursive: true, force: true });
console.log('record: ok');
