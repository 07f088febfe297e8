import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { createFrame, type Frame } from '../model/frame.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { patternBytes } from '../testing/sample-frames.js';
import { availableWorkerRuntimes } from '../runtime/spawn-worker.js';
import { BagWriter, type WriterErrorEvent } from './bag-writer.js';
import { spareSlabs } from '../writer-worker/idle-writers.js';
import { faultBackend, lostBackend } from './fault-backends.test.helper.js';

registerBackend(memoryBackend);
registerBackend(faultBackend);
registerBackend(lostBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-worker-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const bag = (ext = '.memjson', infix = '') => join(dir, `w${n++}${infix}${ext}`);
const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

async function readAll(path: string): Promise<Frame[]> {
  const reader = await BagReader.create(path);
  const out: Frame[] = [];
  for await (const f of reader.frames()) out.push({ ...f, data: f.data.slice() });
  reader.close();
  return out;
}

function sizeOf(i: number): number {
  // Mostly small frames (arena path), now and then one over 64 KiB (own-buffer path), and some empty ones.
  return i % 997 === 0 ? 70_000 + i : i % 13 === 0 ? 0 : 1 + (i % 300);
}

describe('BagWriter in a worker', () => {
  test('async mode runs in a worker; syncMode and worker:false stay on this thread', async () => {
    const a = await BagWriter.create(bag());
    const b = await BagWriter.create(bag(), { syncMode: true });
    const c = await BagWriter.create(bag(), { worker: false });
    assert.deepEqual([a.mode, b.mode, c.mode], ['worker', 'sync', 'queue']);
    assert.equal(a.stats().mode, 'worker');
    await Promise.all([a.close(), b.close(), c.close()]);
  });

  for (const runtime of availableWorkerRuntimes()) {
    test(`order is kept across the thread boundary, many frames on several urls (${runtime} adapter)`, async () => {
      const path = bag();
      const writer = await BagWriter.create(path, { worker: runtime });
      const total = 6000;
      // Half in one synchronous burst (batches handed over by size), half spread over turns (handed over per turn).
      for (let i = 0; i < total / 2; i++)
        writer.push(createFrame({ timestamp: i, url: `dds://u${i % 5}`, data: patternBytes(sizeOf(i), i) }));
      for (let i = total / 2; i < total; i++) {
        writer.push(createFrame({ timestamp: i, url: `dds://u${i % 5}`, data: patternBytes(sizeOf(i), i) }));
        if (i % 500 === 0) await tick();
      }
      await writer.close();
      const stats = writer.stats();
      assert.equal(stats.writtenFrames, total);
      assert.equal(stats.queuedFrames, 0);
      assert.equal(stats.queuedBytes, 0);
      const frames = await readAll(path);
      assert.equal(frames.length, total);
      for (let i = 0; i < total; i++) {
        const f = frames[i]!;
        assert.equal(f.timestamp, i);
        assert.equal(f.url, `dds://u${i % 5}`);
        assert.deepEqual(f.data, patternBytes(sizeOf(i), i), `payload of frame ${i}`);
      }
    });
  }

  test("a recording that closes cleanly leaves its shared slabs to the process's next recording", async () => {
    spareSlabs.drop();
    const record = (writer: BagWriter) => {
      for (let i = 0; i < 3000; i++)
        writer.push(createFrame({ timestamp: i, url: `dds://u${i % 3}`, data: patternBytes(sizeOf(i), i) }));
    };
    const first = await BagWriter.create(bag());
    record(first);
    await first.close();
    const kept = spareSlabs.keptBytes;
    assert.ok(kept > 0, 'the first recording left slabs');
    const second = await BagWriter.create(bag());
    record(second);
    assert.ok(spareSlabs.keptBytes < kept, 'the second recording took some of them');
    await second.close();
    assert.equal((await readAll(second.path)).length, 3000);
  });

  test('same timestamps on different urls keep push order', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    for (let i = 0; i < 300; i++)
      writer.push(createFrame({ timestamp: 42, url: `u${i}`, data: new Uint8Array([i & 0xff]) }));
    await writer.close();
    assert.deepEqual(
      (await readAll(path)).map((f) => f.url),
      Array.from({ length: 300 }, (_, i) => `u${i}`),
    );
  });

  test('payloads are copied at push: the caller may reuse its buffer at once', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    const small = new Uint8Array([1, 2, 3]);
    const large = patternBytes(100_000, 7);
    writer.push(createFrame({ timestamp: 1, url: 'a', data: small }));
    writer.push(createFrame({ timestamp: 2, url: 'a', data: large }));
    small.fill(9);
    large.fill(9);
    await writer.close();
    const frames = await readAll(path);
    assert.deepEqual(frames[0]!.data, new Uint8Array([1, 2, 3]));
    assert.deepEqual(frames[1]!.data, patternBytes(100_000, 7));
  });

  test('transferPayloads moves large buffers without copying (and detaches them)', async () => {
    const path = bag();
    const writer = await BagWriter.create(path, { transferPayloads: true });
    const owned = patternBytes(200_000, 3);
    const view = patternBytes(200_000, 4).subarray(10);
    writer.push(createFrame({ timestamp: 1, url: 'a', data: owned }));
    writer.push(createFrame({ timestamp: 2, url: 'a', data: view }));
    await tick();
    assert.equal(owned.byteLength, 0, 'the whole-buffer payload was transferred');
    if ('detached' in ArrayBuffer.prototype) {
      // Where the runtime can tell (ES2024 `detached`), pushing a given-away buffer again is refused, not stored empty.
      assert.equal(writer.push(createFrame({ timestamp: 3, url: 'a', data: owned })), -1);
    }
    await writer.close();
    assert.equal(view.byteLength, 199_990, 'a view into a larger buffer is copied, never detached');
    const frames = await readAll(path);
    assert.deepEqual(frames[0]!.data, patternBytes(200_000, 3));
    assert.deepEqual(frames[1]!.data, patternBytes(200_000, 4).subarray(10));
  });

  test('transferPayloads moves whole buffers from 16 KiB on; smaller ones and repeats of one buffer are copied', async () => {
    const path = bag();
    const writer = await BagWriter.create(path, { transferPayloads: true });
    const small = patternBytes(16 * 1024 - 1, 5);
    const mid = patternBytes(16 * 1024, 6);
    writer.push(createFrame({ timestamp: 1, url: 'a', data: small }));
    writer.push(createFrame({ timestamp: 2, url: 'a', data: mid }));
    // The same buffer twice in one batch: the second push cannot move it again, so it is copied first.
    const twice = patternBytes(40_000, 7);
    writer.push(createFrame({ timestamp: 3, url: 'a', data: twice }));
    writer.push(createFrame({ timestamp: 4, url: 'a', data: twice }));
    await tick();
    assert.equal(small.byteLength, 16 * 1024 - 1, 'below 16 KiB the payload is copied');
    assert.equal(mid.byteLength, 0, 'from 16 KiB a whole-buffer payload moves');
    await writer.close();
    const frames = await readAll(path);
    assert.deepEqual(
      frames.map((f) => f.data.length),
      [16 * 1024 - 1, 16 * 1024, 40_000, 40_000],
    );
    assert.deepEqual(frames[1]!.data, patternBytes(16 * 1024, 6));
    assert.deepEqual(frames[2]!.data, patternBytes(40_000, 7));
    assert.deepEqual(frames[3]!.data, patternBytes(40_000, 7));
  });

  test('pushDurable resolves only once the frame is committed: a reader finds it before close', async () => {
    const path = bag();
    const writer = await BagWriter.create(path);
    for (let i = 0; i < 50; i++) writer.push(createFrame({ timestamp: i, url: 'bulk', data: patternBytes(32, i) }));
    const ts = await writer.pushDurable(createFrame({ timestamp: 99, url: 'durable', data: new Uint8Array([7]) }));
    assert.equal(ts, 99);
    assert.equal(writer.stats().commits, 1);
    const seen = await readAll(path);
    assert.equal(seen.length, 51, 'everything pushed before the durable frame is on disk too');
    assert.deepEqual(seen.at(-1)!.data, new Uint8Array([7]));
    await writer.close();
  });

  test('queue limits count frames the worker has not finished; refusals are counted by reason', async () => {
    // 30 ms per write keeps the worker busy while the producer pushes in one synchronous run.
    // `maxQueueTimeMs: 0`: the plain frame limit, whatever rate an earlier recording of this process measured.
    const writer = await BagWriter.create(bag('.faultjson', '-slow-30'), { maxTaskDepth: 5, maxQueueTimeMs: 0 });
    let accepted = 0;
    for (let i = 0; i < 50; i++)
      if (writer.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(4) })) >= 0) accepted++;
    assert.equal(accepted, 5);
    assert.equal(writer.stats().dropped.queueDepth, 45);
    assert.equal(writer.stats().queuedFrames, 5);
    await assert.rejects(writer.pushDurable(createFrame({ timestamp: 60, url: 'a', data: new Uint8Array(1) })), {
      code: 'QUEUE_FULL',
    });
    await writer.close();
    assert.equal(writer.stats().writtenFrames, 5);

    const w2 = await BagWriter.create(bag('.faultjson', '-slow-30'), { maxMemorySize: 1000 });
    let bytes = 0;
    for (let i = 0; i < 10; i++)
      if (w2.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(300) })) >= 0) bytes += 300;
    assert.equal(bytes, 900);
    assert.equal(w2.stats().dropped.queueMemory, 7);
    assert.equal(w2.stats().queuedBytes, 900);
    await w2.close();
  });

  test('the queue drains while the producer keeps pushing (limits follow the worker, not the acks)', async () => {
    const writer = await BagWriter.create(bag(), { maxTaskDepth: 2000 });
    let accepted = 0;
    const deadline = performance.now() + 3000;
    // One long synchronous run: acks cannot arrive, yet the shared progress counter lets the queue move.
    for (let i = 0; accepted < 6000 && performance.now() < deadline; i++) {
      if (writer.push(createFrame({ timestamp: i, url: 'a', data: new Uint8Array(8) })) >= 0) accepted++;
    }
    await writer.close();
    assert.ok(accepted > 2000, `accepted ${accepted} frames, more than the queue depth`);
    assert.equal(writer.stats().writtenFrames, accepted);
  });

  test('quit with a full queue writes everything queued, then closes the file', async () => {
    const path = bag('.faultjson', '-slow-2');
    const writer = await BagWriter.create(path);
    for (let i = 0; i < 150; i++)
      writer.push(createFrame({ timestamp: i, url: `u${i % 3}`, data: patternBytes(64, i) }));
    assert.ok(writer.stats().queuedFrames > 0);
    writer.quit();
    assert.equal(writer.push(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(1) })), -1);
    await writer.waitForQuit();
    const stats = writer.stats();
    assert.deepEqual(
      [stats.writtenFrames, stats.queuedFrames, stats.dropped.closed, stats.currentFile],
      [150, 0, 1, ''],
    );
    const reader = await BagReader.create(path);
    assert.equal(reader.getInfo().hasCompleted, true);
    assert.equal(reader.getInfo().messageCount, 150);
    reader.close();
  });

  test("a file that cannot be created rejects create with the worker's error", async () => {
    await assert.rejects(BagWriter.create(join(dir, 'no', 'such', 'dir', 'x.memjson')), (e: unknown) => {
      assert.ok(BagError.isInstance(e));
      assert.equal(e.code, 'IO_ERROR');
      assert.match(e.message, /ENOENT|no such file/i);
      return true;
    });
  });

  test('a backend the worker cannot find is an INTERNAL error naming the module', async () => {
    await assert.rejects(
      BagWriter.create(bag('.lostjson')),
      (e: unknown) => BagError.isInstance(e) && e.code === 'INTERNAL' && /lost/.test(e.message),
    );
  });

  test('a storage error in the worker fails the writer and reaches callbacks and error listeners', async () => {
    const path = bag('.faultjson');
    const writer = await BagWriter.create(path);
    const called: BagError[] = [];
    const events: BagError[] = [];
    writer.registerErrorCallback((e) => called.push(e));
    writer.addEventListener('error', (e) => events.push((e as WriterErrorEvent).error));
    writer.push(createFrame({ timestamp: 1, url: 'ok', data: new Uint8Array(1) }));
    writer.push(createFrame({ timestamp: 2, url: 'fail/storage', data: new Uint8Array(1) }));
    writer.push(createFrame({ timestamp: 3, url: 'ok', data: new Uint8Array(1) }));
    await assert.rejects(writer.pushDurable(createFrame({ timestamp: 4, url: 'ok', data: new Uint8Array(1) })), {
      code: 'IO_ERROR',
    });
    assert.equal(writer.fail(), true);
    assert.equal(called.length, 1);
    assert.equal(called[0]!.code, 'IO_ERROR');
    assert.match(called[0]!.message, /disk on fire/);
    assert.equal(called[0]!.url, 'fail/storage', 'the error keeps its context across the thread boundary');
    assert.deepEqual(events, called);
    assert.equal(writer.stats().lastError, called[0]);
    assert.equal(
      writer.push(createFrame({ timestamp: 5, url: 'ok', data: new Uint8Array(1) })),
      -1,
      'a failed writer refuses at once',
    );
    const stats = writer.stats();
    assert.equal(stats.writtenFrames, 1);
    assert.equal(stats.dropped.storageError, 4);
    await writer.close();
  });

  test('an I/O error of the real file (its directory vanished) surfaces through fail() and pushDurable', async () => {
    const sub = join(dir, `gone-${n++}`);
    mkdirSync(sub);
    const writer = await BagWriter.create(join(sub, 'x.memjson'));
    let reported: BagError | undefined;
    writer.registerErrorCallback((e) => (reported = e));
    rmSync(sub, { recursive: true, force: true });
    await assert.rejects(
      writer.pushDurable(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(1) })),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR',
    );
    assert.equal(writer.fail(), true);
    assert.match(reported?.message ?? '', /commit failed/);
    await writer.close();
  });

  test('only the worker tells its backend it runs on the writer thread (RecordingContext.writerThread)', async () => {
    for (const [options, expected] of [
      [{}, true],
      [{ syncMode: true }, false],
      [{ worker: false }, false],
    ] as const) {
      const writer = await BagWriter.create(bag('.faultjson'), options);
      const called: BagError[] = [];
      writer.registerErrorCallback((e) => called.push(e));
      writer.push(createFrame({ timestamp: 1, url: 'ask/writer-thread', data: new Uint8Array(1) }));
      await writer.pushDurable(createFrame({ timestamp: 2, url: 'ok', data: new Uint8Array(1) }));
      await writer.close();
      assert.equal(called.length, 1, JSON.stringify(options));
      assert.match(called[0]!.message, new RegExp(`writerThread ${expected}`), JSON.stringify(options));
    }
  });

  test('a rejected frame in the worker is counted and reported without failing the writer', async () => {
    const writer = await BagWriter.create(bag('.faultjson'));
    const called: BagError[] = [];
    writer.registerErrorCallback((e) => called.push(e));
    writer.push(createFrame({ timestamp: 1, url: 'fail/limit', data: new Uint8Array(1) }));
    await writer.pushDurable(createFrame({ timestamp: 2, url: 'ok', data: new Uint8Array(1) }));
    assert.equal(writer.fail(), false);
    assert.equal(writer.stats().dropped.limit, 1);
    assert.equal(called[0]?.code, 'LIMIT_REACHED');
    await writer.close();
  });
});
