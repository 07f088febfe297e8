// The behaviours every mode shares, run against each: the worker, the same-thread queue (fallback) and sync mode.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import type { BagError } from '../errors.js';
import { createFrame, type Frame } from '../model/frame.js';
import { BagPluginInterface } from '../plugins/bag-plugin.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { patternBytes } from '../testing/sample-frames.js';
import { BagWriter, type BagWriterOptions } from './bag-writer.js';
import { faultBackend } from './fault-backends.test.helper.js';

registerBackend(memoryBackend);
registerBackend(faultBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-modes-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const MODES: Array<[string, BagWriterOptions]> = [
  ['worker', {}],
  ['queue', { worker: false }],
  ['sync', { syncMode: true }],
];

async function readAll(path: string): Promise<Frame[]> {
  const reader = await BagReader.create(path);
  const out: Frame[] = [];
  for await (const f of reader.frames()) out.push({ ...f, data: f.data.slice() });
  reader.close();
  return out;
}

class UpperUrls extends BagPluginInterface {
  override convertUrlMeta(url: string): string | null {
    return url === 'drop' ? null : url.toUpperCase();
  }
}

for (const [mode, options] of MODES) {
  describe(`BagWriter (${mode} mode)`, () => {
    test('writes every frame in push order, then closes the file complete', async () => {
      const path = join(dir, `m${n++}.memjson`);
      const writer = await BagWriter.create(path, options);
      assert.equal(writer.mode, mode);
      for (let i = 0; i < 500; i++)
        writer.push(createFrame({ timestamp: i, url: `u${i % 4}`, data: patternBytes(i % 50, i) }));
      await writer.close();
      const frames = await readAll(path);
      assert.deepEqual(
        frames.map((f) => f.timestamp),
        Array.from({ length: 500 }, (_, i) => i),
      );
      assert.deepEqual(frames[499]!.data, patternBytes(499 % 50, 499));
      assert.equal(writer.stats().writtenFrames, 500);
    });

    test('a write plugin renames and drops urls before storage', async () => {
      const path = join(dir, `m${n++}.memjson`);
      const writer = await BagWriter.create(path, options);
      writer.bindPluginInterface(new UpperUrls());
      writer.push(createFrame({ timestamp: 1, url: 'keep', data: new Uint8Array(1) }));
      writer.push(createFrame({ timestamp: 2, url: 'drop', data: new Uint8Array(1) }));
      await writer.close();
      assert.deepEqual(
        (await readAll(path)).map((f) => f.url),
        ['KEEP'],
      );
      assert.equal(writer.stats().dropped.plugin, 1);
    });

    // Callers in plain JavaScript: before, a missing serType threw a TypeError out of push() in worker mode and was
    // stored as none in the others, and a string or BigInt timestamp was taken for "now".
    test('a frame the types do not allow is refused (INVALID_ARGUMENT, counted as invalidFrame) by push and write', async () => {
      const path = join(dir, `m${n++}.memjson`);
      const writer = await BagWriter.create(path, options);
      const good = { timestamp: 1, url: 'u', data: new Uint8Array(2), serType: 'raw', schemaType: 0, actionType: 0 };
      const bad: Array<[unknown, RegExp]> = [
        [{ ...good, serType: undefined }, /serType must be a string, not undefined/],
        [{ ...good, serType: 5 }, /serType must be a string, not number/],
        [{ ...good, timestamp: '1700000000' }, /timestamp must be a number \(µs\), not string/],
        [{ ...good, timestamp: 10n }, /timestamp must be a number \(µs\), not bigint/],
        [{ ...good, publishTime: null }, /publishTime must be a number \(µs\), not null/],
        [{ ...good, schemaType: 'json' }, /schemaType must be a number, not string/],
        [{ ...good, actionType: 'publish' }, /actionType must be a number, not string/],
        [{ ...good, data: [1, 2] }, /data must be a Uint8Array/],
        [null, /a frame must be an object, not null/],
      ];
      for (const [frame, message] of bad) {
        assert.equal(writer.push(frame as Frame), -1, String(message));
        await assert.rejects(writer.write(frame as Frame), (e: BagError) => {
          assert.equal(e.code, 'INVALID_ARGUMENT');
          assert.match(e.message, message);
          return true;
        });
      }
      assert.equal(await writer.write(good), 1);
      await writer.close();
      assert.equal(writer.stats().dropped.invalidFrame, bad.length * 2);
      assert.deepEqual(
        (await readAll(path)).map((f) => [f.url, f.timestamp]),
        [['u', 1]],
      );
    });

    test('a url with a lone surrogate is dropped as invalidFrame, counted under the url as UTF-8 stores it', async () => {
      const path = join(dir, `m${n++}.memjson`);
      const writer = await BagWriter.create(path, options);
      writer.push(createFrame({ timestamp: 1, url: 'u', data: new Uint8Array(1) }));
      const lone = createFrame({ timestamp: 2, url: 'u\ud800', data: new Uint8Array(1) });
      // Refused on the caller's thread in every mode, so write() rejects and push() returns -1 (the same-thread queue
      // once met it only when it wrote the frame, after write() resolved).
      await assert.rejects(writer.write(lone), {
        code: 'INVALID_ARGUMENT',
        message: /^url is not well-formed Unicode/,
      });
      assert.equal(writer.push(lone), -1);
      // A ser is checked too.
      const loneSer = createFrame({ timestamp: 3, url: 'v', serType: 'raw\udc00', data: new Uint8Array(1) });
      await assert.rejects(writer.write(loneSer), {
        code: 'INVALID_ARGUMENT',
        message: /^ser type is not well-formed Unicode/,
      });
      writer.push(createFrame({ timestamp: 4, url: 'u', data: new Uint8Array(1) }));
      await writer.close();
      assert.deepEqual(
        (await readAll(path)).map((f) => f.timestamp),
        [1, 4],
      );
      assert.equal(writer.stats().dropped.invalidFrame, 3);
      assert.deepEqual(writer.stats().droppedByUrl, { 'u\ufffd': { invalidFrame: 2 }, v: { invalidFrame: 1 } });
    });

    test('pushDurable resolves after the commit', async () => {
      const path = join(dir, `m${n++}.memjson`);
      const writer = await BagWriter.create(path, options);
      assert.equal(await writer.pushDurable(createFrame({ timestamp: 5, url: 'a', data: new Uint8Array(1) })), 5);
      assert.equal((await readAll(path)).length, 1);
      await writer.close();
    });

    test('a storage error sets fail(), is reported once, and later frames are counted as dropped', async () => {
      const writer = await BagWriter.create(join(dir, `m${n++}.faultjson`), options);
      const errors: BagError[] = [];
      writer.registerErrorCallback((e) => errors.push(e));
      writer.push(createFrame({ timestamp: 1, url: 'fail/storage', data: new Uint8Array(1) }));
      await writer.pushDurable(createFrame({ timestamp: 2, url: 'a', data: new Uint8Array(1) })).catch(() => {});
      assert.equal(writer.fail(), true);
      assert.equal(errors.length, 1);
      assert.equal(writer.stats().lastError, errors[0]);
      assert.equal(writer.stats().dropped.storageError, 2);
      await writer.close();
    });
  });
}

for (const [mode, options] of MODES.filter(([m]) => m !== 'sync')) {
  test(`queue limits refuse with counted reasons and reject a durable push (${mode} mode)`, async () => {
    // `maxQueueTimeMs: 0`: VLink's plain frame limit (else a rate measured by an earlier recording of this process
    // would let the queue take more than 3 frames).
    const writer = await BagWriter.create(join(dir, `m${n++}.faultjson`), {
      ...options,
      maxTaskDepth: 3,
      maxMemorySize: 1000,
      maxQueueTimeMs: 0,
    });
    const results = [0, 1, 2, 3].map((i) =>
      writer.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(10) })),
    );
    assert.deepEqual(results, [0, 1, 2, -1]);
    await assert.rejects(writer.pushDurable(createFrame({ timestamp: 9, url: 'a', data: new Uint8Array(1) })), {
      code: 'QUEUE_FULL',
    });
    assert.equal(writer.stats().dropped.queueDepth, 2);
    await writer.close();
    const w2 = await BagWriter.create(join(dir, `m${n++}.faultjson`), { ...options, maxMemorySize: 100 });
    assert.deepEqual(
      [60, 60].map((size, i) => w2.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(size) }))),
      [0, -1],
    );
    assert.equal(w2.stats().dropped.queueMemory, 1);
    await w2.close();
    assert.equal(writer.stats().writtenFrames + w2.stats().writtenFrames, 4);
  });
}
