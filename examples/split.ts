// A split recording (.vdbx): the writer starts a new .vdb segment every 2 s of recording time and tells us through
// the split callback; the manifest (drive.vdbx) lists the segments, and a reader opens the whole recording as one.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BagReader, BagWriter, createFrame, SchemaType } from '@vlink/bag';

const dir = mkdtempSync(join(tmpdir(), 'vlink-example-split-'));
const path = join(dir, 'drive.vdbx'); // .vcapx splits MCAP the same way

// splitByTime (ms of recording time) takes priority over splitBySize (bytes); maxSplitCount would delete old segments.
const writer = await BagWriter.create(path, { splitByTime: 2000, compress: 'auto' });
const before: string[] = [];
const after: string[] = [];
// before = true: called before the old segment is closed; false (default): once the new one is open, and also
// for the first segment (index 0) on the first write, as VLink does. `file` is the new segment's path.
writer.registerSplitCallback((index, file) => before.push(`${index}:${file}`), true);
writer.registerSplitCallback((index, file) => after.push(`${index}:${file}`));

for (let t = 0; t < 7_000_000; t += 20_000) {
  writer.push(
    createFrame({
      url: 'dds://odom',
      serType: 'json',
      schemaType: SchemaType.Raw,
      timestamp: t,
      data: new TextEncoder().encode(`{"t":${t}}`),
    }),
  );
}
await writer.close();

const names = (calls: string[]) =>
  calls.map((call) =>
    call
      .replace(dir, '')
      .replace(/^[/\\]/, '')
      .replace(/:[/\\]/, ':'),
  );
console.log(`split callbacks: before ${names(before).join(', ')}; after ${names(after).join(', ')}`);
console.log(`files: ${readdirSync(dir).sort().join(', ')}`);
// 7 s split every 2 s: segments drive.1.vdb … drive.4.vdb; three splits, plus the first segment's "after" call.
assert.deepEqual(names(before), ['1:drive.2.vdb', '2:drive.3.vdb', '3:drive.4.vdb']);
assert.deepEqual(names(after), ['0:drive.1.vdb', '1:drive.2.vdb', '2:drive.3.vdb', '3:drive.4.vdb']);
for (const n of [1, 2, 3, 4]) assert.ok(existsSync(join(dir, `drive.${n}.vdb`)), `segment ${n}`);
const manifest = JSON.parse(readFileSync(path, 'utf8'));
assert.deepEqual(manifest.VLinkFiles, ['drive.1.vdb', 'drive.2.vdb', 'drive.3.vdb', 'drive.4.vdb']);

// Reading the manifest reads every segment in order, as one recording.
const reader = await BagReader.create(path);
const info = reader.getInfo();
assert.equal(info.messageCount, 350);
assert.equal(info.splitCount, 4);
let count = 0;
let last = -1;
for await (const frame of reader.frames()) {
  assert.ok(frame.timestamp > last);
  last = frame.timestamp;
  count++;
}
reader.close();
assert.equal(count, 350);

rmSync(dir, { recursive: true, force: true });
console.log('split: ok');
