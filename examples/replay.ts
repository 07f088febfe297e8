// Paced playback with VLink's callbacks: record 1 s of frames, replay them at 4× speed, pause and resume midway,
// and check the frames came back in order, complete, and at the recording's pace.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BagReader, BagWriter, createFrame, PlayStatus, SchemaType, type Frame } from '@vlink/bag';

const dir = mkdtempSync(join(tmpdir(), 'vlink-example-replay-'));
const path = join(dir, 'pose.vcap'); // MCAP this time; replay works the same for every format

// 50 Hz for 1 s. syncMode writes on this stack: handy for small scripts and tests.
const writer = await BagWriter.create(path, { syncMode: true });
for (let i = 0; i < 50; i++) {
  writer.push(
    createFrame({
      url: 'dds://pose',
      serType: 'json',
      schemaType: SchemaType.Raw,
      timestamp: i * 20_000,
      data: new TextEncoder().encode(`{"i":${i}}`),
    }),
  );
}
await writer.close();

const reader = await BagReader.create(path);
const received: Array<{ timestamp: number; at: number }> = [];
const statuses: string[] = [];
const started = performance.now();

// The output callback gets every frame at its due time. Its `data` is valid until the callback returns:
// copy it (frame.data.slice()) to keep it.
reader.registerOutputCallback((frame: Frame) => {
  received.push({ timestamp: frame.timestamp, at: performance.now() - started });
  if (received.length === 25) {
    // Controls can be called from anywhere, callbacks included: pause for 100 ms, then resume.
    reader.pause();
    setTimeout(() => reader.resume(), 100);
  }
});
reader.registerStatusCallback((status) => statuses.push(PlayStatus[status])); // only real changes
const finished = new Promise<boolean>((resolve) =>
  reader.registerFinishCallback((interrupted) => resolve(interrupted)),
);

reader.play({ rate: 4 }); // 1 s of recording → 250 ms, plus the 100 ms pause
const interrupted = await finished;
const wallMs = performance.now() - started;
reader.quit();
await reader.waitForQuit();
reader.close();

console.log(`replayed ${received.length} frames in ${wallMs.toFixed(0)} ms; statuses ${statuses.join(' → ')}`);
assert.equal(interrupted, false, 'the pass ran to its end');
assert.equal(received.length, 50);
assert.deepEqual(
  received.map((r) => r.timestamp),
  Array.from({ length: 50 }, (_, i) => i * 20_000),
  'in order, timestamps untouched',
);
assert.ok(statuses.includes('Paused') && statuses.at(-1) === 'Stopped', `status changes: ${statuses.join(', ')}`);
// Paced: 980 ms of recording at 4× is 245 ms, plus the pause. Generous upper bound for a loaded CI machine.
assert.ok(wallMs >= 245 + 100 - 20, `too fast: ${wallMs} ms`);
assert.ok(wallMs < 5_000, `too slow: ${wallMs} ms`);

// The same playback as an async iterator: paced the same way; breaking out stops it.
const again = await BagReader.create(path);
let count = 0;
for await (const frame of again.play({ rate: 10, beginTime: 500 /* ms */ })) {
  assert.ok(frame.timestamp >= 500_000);
  if (++count === 10) break;
}
again.close();
assert.equal(count, 10);

rmSync(dir, { recursive: true, force: true });
console.log('replay: ok');
