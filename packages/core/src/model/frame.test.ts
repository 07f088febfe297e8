import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter } from '../writer/bag-writer.js';
import { ActionType } from './action-type.js';
import { createFrame } from './frame.js';
import { SchemaType } from './schema-type.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-frame-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('createFrame keeps a publish time and a sequence it is given, and adds neither when not', () => {
  const data = new Uint8Array([1]);
  const full = createFrame({ url: '/a', data, timestamp: 100_000, publishTime: 40_000, sequence: 7 });
  assert.equal(full.publishTime, 40_000);
  assert.equal(full.sequence, 7);
  // A negative publish time is a sample taken before the recording started: kept as given.
  assert.equal(createFrame({ url: '/a', data, publishTime: -5 }).publishTime, -5);
  const bare = createFrame({ url: '/a', data });
  assert.deepEqual(bare, {
    timestamp: -1,
    url: '/a',
    data,
    serType: '',
    schemaType: SchemaType.Unknown,
    actionType: ActionType.Publish,
  });
  assert.ok(!('publishTime' in bare) && !('sequence' in bare), 'absent keys stay absent');
});

test('a publish time given to createFrame is written and read back', async () => {
  const path = join(dir, 'pub.memjson');
  const writer = await BagWriter.create(path, { syncMode: true });
  const frame = (timestamp: number, publishTime?: number) =>
    createFrame({
      url: '/a',
      data: new Uint8Array([timestamp & 0xff]),
      timestamp,
      serType: 'raw',
      schemaType: SchemaType.Raw,
      ...(publishTime === undefined ? {} : { publishTime }),
    });
  assert.ok(writer.push(frame(100_000, 40_000)) >= 0);
  assert.ok(writer.push(frame(200_000)) >= 0);
  await writer.close();
  const reader = await BagReader.create(path);
  const times: Array<[number, number | undefined]> = [];
  for await (const f of reader.frames()) times.push([f.timestamp, f.publishTime]);
  reader.close();
  assert.deepEqual(times, [
    [100_000, 40_000],
    [200_000, 200_000],
  ]);
});
