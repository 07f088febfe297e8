// A dashcam-style TriggerRecorder: frames stream into per-url rings in memory; trigger() writes the last `preMs`
// before the trigger and `postMs` after it into a bag. There is no bus: the application feeds frames with ingest().
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BagReader, createFrame, SchemaType, TriggerRecorder } from '@vlink/bag';

const dir = mkdtempSync(join(tmpdir(), 'vlink-example-trigger-'));
const recorder = new TriggerRecorder({
  dumpDir: dir,
  fileType: 'vdb',
  defaultPreMs: 300, // keep 300 ms of history
  defaultPostMs: 200, // and record 200 ms more after a trigger
  retentionGuardMs: 50,
});
recorder.registerHooks({
  onDumpFinished: (r) => console.log(`dump ${r.file}: ${r.frames} frames, reason ${r.reason}`),
});
recorder.start();

// A 100 Hz sensor for ~1 s. timestamp -1: stamped on arrival with the recorder's clock.
const sensor = setInterval(
  () =>
    recorder.ingest(
      createFrame({
        url: 'dds://speed',
        serType: 'text',
        schemaType: SchemaType.Raw,
        data: new TextEncoder().encode('42 km/h'),
      }),
    ),
  10,
);
await new Promise((resolve) => setTimeout(resolve, 600));

// Something happened: dump. The promise resolves once the post window (+ guard) has passed and the file is written.
const result = await recorder.trigger({ reason: 'hard-brake' });
clearInterval(sensor);
await recorder.close();

const reader = await BagReader.create(result.file);
const info = reader.getInfo();
console.log(`${info.messageCount} frames over ${info.totalDuration} ms, tag ${info.tagName}`);
reader.close();
assert.equal(info.tagName, 'hard-brake');
assert.equal(info.messageCount, result.frames);
// ~500 ms of a 100 Hz stream (timers on a busy machine fire late: be generous about the lower bound).
assert.ok(result.frames >= 15 && result.frames <= 60, `frames in the dump: ${result.frames}`);
assert.ok(result.durationUs <= 600_000, `dump spans ${result.durationUs} µs`);

rmSync(dir, { recursive: true, force: true });
console.log('trigger: ok');
