import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { createFrame, type Frame } from '../model/frame.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { sampleFrames } from '../testing/sample-frames.js';
import { BagWriter } from '../writer/bag-writer.js';
import { BagReader } from './bag-reader.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-reader-'));
const path = join(dir, 'r.memjson');
const input = sampleFrames(60);
before(async () => {
  const writer = await BagWriter.create(path, { syncMode: true });
  for (const f of input) writer.push(f);
  await writer.close();
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('BagReader', () => {
  test('cursor reads every frame, then eof', async () => {
    const reader = await BagReader.create(path);
    const frame = createFrame({ url: 'x', data: new Uint8Array(0) });
    const got: number[] = [];
    while (reader.readNext(frame)) got.push(frame.timestamp);
    assert.equal(reader.eof(), true);
    assert.equal(reader.fail(), false);
    assert.deepEqual(
      got,
      input.map((f) => f.timestamp),
    );
    assert.equal(reader.readNext(frame), false);
    reader.close();
  });

  test('openCursor filters by url and ms window (inclusive) and rewinds', async () => {
    const reader = await BagReader.create(path);
    reader.openCursor({ filterUrls: ['dds://imu'], beginTime: 100, endTime: 300 });
    const got: Frame[] = [];
    let f: Frame | undefined;
    while ((f = reader.next())) got.push(f);
    const want = input.filter((x) => x.url === 'dds://imu' && x.timestamp >= 100_000 && x.timestamp <= 300_000);
    assert.deepEqual(
      got.map((x) => x.timestamp),
      want.map((x) => x.timestamp),
    );
    assert.equal(reader.eof(), true);
    reader.openCursor();
    assert.equal(reader.eof(), false);
    assert.equal(reader.next()?.timestamp, input[0]!.timestamp);
    reader.close();
  });

  test('frames() iterates with filters and stops on abort', async () => {
    const reader = await BagReader.create(path);
    let count = 0;
    for await (const frame of reader.frames({ filterUrls: ['dds://camera/front'] })) {
      assert.equal(frame.url, 'dds://camera/front');
      count++;
    }
    assert.equal(count, input.filter((x) => x.url === 'dds://camera/front').length);
    const controller = new AbortController();
    await assert.rejects(
      (async () => {
        for await (const _ of reader.frames({ signal: controller.signal })) controller.abort();
      })(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'ABORTED',
    );
    reader.close();
    assert.throws(() => reader.getInfo(), { code: 'CLOSED' });
  });

  test('bad arguments and missing files are typed errors', async () => {
    await assert.rejects(BagReader.create(join(dir, 'missing.memjson')), { code: 'NOT_FOUND' });
    await assert.rejects(BagReader.create(join(dir, 'x.unknown')), { code: 'UNSUPPORTED_FORMAT' });
    const reader = await BagReader.create(path);
    assert.equal(reader.openCursor({ beginTime: Number.NaN }), false);
    assert.equal(reader.fail(), true);
    assert.equal(reader.getLastError()?.code, 'INVALID_ARGUMENT');
    reader.close();
  });

  // Options as plain JavaScript can pass them. Before: null options threw TypeErrors, `filterUrls: 'a'` filtered by
  // the string's characters, a number `filterUrls` or `signal` was ignored (every frame read), `confineTo: 5` came
  // back as an IO_ERROR about a "path" argument and a string `tryToFix` was taken for true.
  test('options of the wrong type are INVALID_ARGUMENT naming the option, for create, frames() and the cursor', async () => {
    for (const [options, message] of [
      [null, /^reader options must be an object, not null$/],
      [{ tryToFix: 'yes' }, /^reader option tryToFix must be true or false$/],
      [{ verifyCrc: 0 }, /^reader option verifyCrc must be true or false$/],
      [{ confineTo: 5 }, /^reader option confineTo must be a folder path$/],
    ] as const)
      await assert.rejects(BagReader.create(path, options as never), { code: 'INVALID_ARGUMENT', message });
    const reader = await BagReader.create(path);
    const readAll = async (options: unknown) => {
      for await (const _ of reader.frames(options as never));
    };
    for (const [options, message] of [
      [null, /^a read's options must be an object, not null$/],
      [5, /^a read's options must be an object, not number$/],
      [{ filterUrls: 'a' }, /^filterUrls must be an array of url strings$/],
      [{ filterUrls: ['a', 5] }, /^filterUrls must be an array of url strings$/],
      [{ signal: 5 }, /^signal must be an AbortSignal$/],
    ] as const) {
      await assert.rejects(readAll(options), { code: 'INVALID_ARGUMENT', message }, String(message));
      if (message.source.startsWith('^signal')) continue; // the cursor has no signal
      assert.equal(reader.openCursor(options as never), false);
      assert.match(reader.getLastError()?.message ?? '', message);
      assert.equal(reader.getLastError()?.code, 'INVALID_ARGUMENT');
    }
    let n = 0;
    for await (const _ of reader.frames({ filterUrls: [] })) n++;
    assert.equal(n, input.length, 'an empty list still means every url');
    reader.close();
  });
});
