import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagReader,
  BagWriter,
  type BagWriterOptions,
  type Frame,
  SchemaType,
  type WriterDropEvent,
} from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-drops-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const frame = (i: number, url = '/a', serType = 'raw.A'): Frame => ({
  timestamp: i * 1000,
  url,
  data: new Uint8Array([i & 0xff, (i >> 8) & 0xff, 7]),
  serType,
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
});

async function drained(writer: BagWriter): Promise<void> {
  while (writer.stats().queuedFrames > 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

async function readAll(path: string): Promise<{ counters: unknown; frames: number[] }> {
  const reader = await BagReader.create(path);
  try {
    const frames: number[] = [];
    for (reader.openCursor(); ; ) {
      const f = reader.next();
      if (!f) break;
      if (f.url === '/a') frames.push(f.data[0]! | (f.data[1]! << 8));
    }
    return { counters: reader.getInfo().counters, frames };
  } finally {
    reader.close();
  }
}

const modes: Array<[string, BagWriterOptions]> = [
  ['worker', { maxQueueTimeMs: 0 }],
  ['same-thread queue', { worker: false }],
];

describe('drops are counted per url and cause, and stored in the file', () => {
  for (const ext of ['.vdb', '.vcap', '.vdbx', '.vcapx']) {
    for (const [mode, options] of modes) {
      test(`${ext}, ${mode}: queue-full and schema-conflict drops read back from the file`, async () => {
        const path = join(dir, `drops-${mode.replace(/\W/g, '')}${ext}`);
        const writer = await BagWriter.create(path, { ...options, maxTaskDepth: 10, maxMemorySize: 1 << 20 });
        const events: WriterDropEvent[] = [];
        writer.addEventListener('drop', (e) => events.push(e as WriterDropEvent));
        // One synchronous burst: the queue takes 10 frames, the rest of /a is refused.
        for (let i = 0; i < 100; i++) writer.push(frame(i));
        await drained(writer);
        // A ser that contradicts the one stored for /b: rejected where the file is written.
        writer.push(frame(1000, '/b', 'raw.B'));
        await drained(writer);
        writer.push(frame(1001, '/b', 'raw.Other'));
        await writer.close();
        const expected = { '/a': { queueDepth: 90 }, '/b': { schemaConflict: 1 } };
        assert.deepEqual(writer.stats().droppedByUrl, expected);
        assert.equal(events.length, 1, 'one event when drops start');
        assert.equal(events[0]!.reason, 'queueDepth');
        const { counters, frames } = await readAll(path);
        assert.deepEqual(counters, expected);
        assert.deepEqual(
          frames,
          Array.from({ length: 10 }, (_, i) => i),
        );
      });
    }
  }

  test('a recording without drops stores no counters', async () => {
    const path = join(dir, 'clean.vdb');
    const writer = await BagWriter.create(path);
    for (let i = 0; i < 10; i++) writer.push(frame(i));
    await writer.close();
    assert.equal((await readAll(path)).counters, undefined);
  });
});

describe('write(): lossless backpressure', () => {
  for (const [mode, options] of [...modes, ['sync', { syncMode: true }] as [string, BagWriterOptions]]) {
    test(`${mode}: 3000 awaited writes through a 10-frame queue: none dropped, all in order`, async () => {
      const path = join(dir, `write-${mode.replace(/\W/g, '')}.vcap`);
      const writer = await BagWriter.create(path, { ...options, maxTaskDepth: 10 });
      for (let i = 0; i < 3000; i++) assert.equal(await writer.write(frame(i)), i * 1000);
      await writer.close();
      assert.deepEqual(writer.stats().dropped.queueDepth, 0);
      const { frames } = await readAll(path);
      assert.deepEqual(
        frames,
        Array.from({ length: 3000 }, (_, i) => i),
      );
    });
  }

  test('writes not awaited one by one still keep their order and lose nothing; ready() resolves', async () => {
    const path = join(dir, 'write-many.vdb');
    const writer = await BagWriter.create(path, { maxTaskDepth: 8, maxQueueTimeMs: 0 });
    const all = Array.from({ length: 2000 }, (_, i) => writer.write(frame(i)));
    await writer.ready();
    await Promise.all(all);
    await writer.close();
    assert.equal(writer.stats().writtenFrames, 2000);
    assert.deepEqual(
      (await readAll(path)).frames,
      Array.from({ length: 2000 }, (_, i) => i),
    );
  });

  test('refusals reject: an empty url, a closed writer', async () => {
    const writer = await BagWriter.create(join(dir, 'refused.vcap'));
    await assert.rejects(writer.write({ ...frame(1), url: '' }), /url must not be empty/);
    await writer.close();
    await assert.rejects(writer.write(frame(2)), /closed/);
  });
});
