import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagReader, BagWriter, type BagWriterOptions, type Frame, SchemaType } from './index.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-sources-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

/** A frame whose payload names its url's sequence number (first 4 bytes) and is filled with a byte derived from it. */
function frame(url: string, seq: number, size: number, timestamp = -1, action = ActionType.Publish): Frame {
  const data = new Uint8Array(size).fill((seq * 7 + url.length) & 0xff);
  new DataView(data.buffer).setUint32(0, seq, true);
  return { timestamp, url, data, serType: 'raw', schemaType: SchemaType.Raw, actionType: action };
}

interface Read {
  seqs: Map<string, number[]>;
  counters: unknown;
}

/** Every frame of the file, per url in file order, with each payload checked against the one that was pushed. */
async function readBack(path: string): Promise<Read> {
  const reader = await BagReader.create(path);
  try {
    const seqs = new Map<string, number[]>();
    for await (const f of reader.frames()) {
      const seq = new DataView(f.data.buffer, f.data.byteOffset).getUint32(0, true);
      const expected = frame(f.url, seq, f.data.byteLength).data;
      assert.deepEqual(f.data.slice(), expected, `payload of ${f.url} #${seq}`);
      if (!seqs.has(f.url)) seqs.set(f.url, []);
      seqs.get(f.url)!.push(seq);
    }
    return { seqs, counters: reader.getInfo().counters };
  } finally {
    reader.close();
  }
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const modes: Array<[string, BagWriterOptions]> = [
  ['worker', { maxQueueTimeMs: 0 }],
  ['same-thread queue', { worker: false }],
];

describe('per-source queues: a firehose cannot starve slow sources', () => {
  for (const ext of ['.vcap', '.vdb']) {
    for (const [mode, options] of modes) {
      test(`${ext}, ${mode}: camera at full speed, state at 100 Hz, actions: only the camera drops`, async () => {
        const path = join(dir, `firehose-${n++}${ext}`);
        // No `sources`: every url is a source of its own and shares the 64-frame queue.
        const writer = await BagWriter.create(path, { ...options, maxTaskDepth: 64, summary: false });
        const accepted: number[] = [];
        let camera = 0;
        let refused = 0;
        const pushCamera = () => {
          const seq = camera++;
          if (writer.push(frame('/camera', seq, 4096)) >= 0) accepted.push(seq);
          else refused++;
        };
        const ticks = 40;
        for (let tick = 0; tick < ticks; tick++) {
          // Each 10 ms turn: a burst of camera frames far beyond the queue, the state sample in the middle of it, and
          // an action request and response every fourth turn, after it.
          for (let i = 0; i < 150; i++) pushCamera();
          assert.ok(writer.push(frame('/state', tick, 64)) >= 0, `state #${tick} accepted`);
          for (let i = 0; i < 150; i++) pushCamera();
          if (tick % 4 === 0) {
            assert.ok(writer.push(frame('/action', tick / 2, 32, -1, ActionType.ClientRequest)) >= 0);
            assert.ok(writer.push(frame('/action', tick / 2 + 1, 32, -1, ActionType.ClientResponse)) >= 0);
          }
          await sleep(10);
        }
        await writer.close();
        assert.ok(refused > 0 && accepted.length > 0, `the camera dropped (${refused}) and was recorded`);
        const stats = writer.stats();
        const expected = { '/camera': { queueDepth: refused } };
        assert.deepEqual(stats.droppedByUrl, expected);
        assert.equal(stats.dropped.queueDepth, refused);
        assert.equal(stats.writtenFrames, accepted.length + ticks + ticks / 2);
        const { seqs, counters } = await readBack(path);
        assert.deepEqual(counters, expected, 'the counters stored in the file');
        assert.deepEqual(seqs.get('/state'), range(ticks), 'every state sample, in order');
        assert.deepEqual(seqs.get('/action'), range(ticks / 2), 'every action, in order');
        assert.deepEqual(seqs.get('/camera'), accepted, 'exactly the camera frames push() accepted, in order');
        assert.equal(camera, accepted.length + refused);
      });
    }
  }

  test('one source alone still has the whole shared queue (no behaviour change without sources)', async () => {
    const path = join(dir, `alone-${n++}.vcap`);
    const writer = await BagWriter.create(path, { maxTaskDepth: 10, maxQueueTimeMs: 0, summary: false });
    const results = range(25).map((i) => writer.push(frame('/camera', i, 100, i)));
    await writer.close();
    assert.deepEqual(results, [...range(10), ...Array(15).fill(-1)]);
    assert.deepEqual(writer.stats().droppedByUrl, { '/camera': { queueDepth: 15 } });
  });

  test('a full shared queue admits a second source up to its fair share, the firehose not at all', async () => {
    const path = join(dir, `share-${n++}.vcap`);
    const writer = await BagWriter.create(path, { worker: false, maxTaskDepth: 12, summary: false });
    // One synchronous turn: nothing drains meanwhile. The camera fills the queue (12), then state gets 12 / 2.
    const camera = range(20).map((i) => writer.push(frame('/camera', i, 16, i)));
    const state = range(10).map((i) => writer.push(frame('/state', i, 16, 100 + i)));
    assert.deepEqual(camera, [...range(12), ...Array(8).fill(-1)]);
    assert.deepEqual(state, [...range(6).map((i) => 100 + i), ...Array(4).fill(-1)]);
    assert.equal(writer.push(frame('/camera', 20, 16, 200)), -1, 'the firehose stays refused while over its share');
    await writer.close();
    const { seqs, counters } = await readBack(path);
    assert.deepEqual(seqs.get('/camera'), range(12));
    assert.deepEqual(seqs.get('/state'), range(6));
    assert.deepEqual(counters, { '/camera': { queueDepth: 9 }, '/state': { queueDepth: 4 } });
  });
});

describe('per-source limits (BagWriterOptions.sources)', () => {
  for (const [mode, options] of modes) {
    test(`${mode}: a source's frame limit groups urls by prefix and counts per url`, async () => {
      const path = join(dir, `frames-${n++}.vcap`);
      const drops: Array<{ reason: string; message: string }> = [];
      const writer = await BagWriter.create(path, {
        ...options,
        summary: false,
        sources: { cameras: { urls: ['/camera/*'], maxFrames: 5 } },
      });
      writer.addEventListener('drop', (e) => {
        const { reason, error } = e as unknown as { reason: string; error: Error };
        drops.push({ reason, message: error.message });
      });
      // One synchronous turn: the two cameras share 5 frames; /state is not in the group and loses nothing.
      const results = range(12).map((i) => writer.push(frame(i % 2 ? '/camera/right' : '/camera/left', i, 64, i)));
      const state = range(12).map((i) => writer.push(frame('/state', i, 64, 100 + i)));
      assert.deepEqual(results, [...range(5), ...Array(7).fill(-1)]);
      assert.deepEqual(
        state,
        range(12).map((i) => 100 + i),
      );
      await assert.rejects(writer.pushDurable(frame('/camera/left', 99, 64, 50)), {
        code: 'QUEUE_FULL',
        message: /source "cameras" queue depth limit \(5 frames\)/,
      });
      await writer.close();
      const expected = { '/camera/left': { queueDepth: 4 }, '/camera/right': { queueDepth: 4 } };
      assert.deepEqual(writer.stats().droppedByUrl, expected);
      assert.equal(drops[0]?.reason, 'queueDepth');
      const { seqs, counters } = await readBack(path);
      assert.deepEqual(counters, expected);
      assert.deepEqual(seqs.get('/camera/left'), [0, 2, 4]);
      assert.deepEqual(seqs.get('/camera/right'), [1, 3]);
      assert.deepEqual(seqs.get('/state'), range(12));
    });

    test(`${mode}: a source's byte limit (a url named directly)`, async () => {
      const path = join(dir, `bytes-${n++}.vdb`);
      const writer = await BagWriter.create(path, {
        ...options,
        summary: false,
        sources: { '/camera': { maxBytes: 10_000 } },
      });
      const results = range(4).map((i) => writer.push(frame('/camera', i, 4096, i)));
      // A small frame still fits beside the two 4 KiB ones: the limit is on bytes, not frames.
      const small = writer.push(frame('/camera', 4, 1000, 4));
      const other = range(4).map((i) => writer.push(frame('/lidar', i, 4096, 10 + i)));
      assert.deepEqual(results, [0, 1, -1, -1]);
      assert.equal(small, 4);
      assert.deepEqual(other, [10, 11, 12, 13]);
      await writer.close();
      const expected = { '/camera': { queueMemory: 2 } };
      assert.deepEqual(writer.stats().droppedByUrl, expected);
      const { seqs, counters } = await readBack(path);
      assert.deepEqual(counters, expected);
      assert.deepEqual(seqs.get('/camera'), [0, 1, 4]);
      assert.deepEqual(seqs.get('/lidar'), range(4));
    });

    test(`${mode}: write() waits per source: a waiting camera does not hold back state`, async () => {
      const path = join(dir, `write-${n++}.vcap`);
      const writer = await BagWriter.create(path, {
        ...options,
        summary: false,
        sources: { '/camera': { maxFrames: 4 } },
      });
      let cameraDone = 0;
      const camera = range(400).map((i) => writer.write(frame('/camera', i, 256)).then(() => void cameraDone++));
      // The camera's writes wait for room in its 4-frame queue; a state write goes at once.
      const stateTs = await writer.write(frame('/state', 0, 64));
      assert.ok(stateTs >= 0);
      assert.ok(cameraDone < 400, `state did not wait behind the camera (${cameraDone} camera writes done)`);
      await writer.ready('/state');
      await Promise.all(camera);
      await writer.close();
      assert.deepEqual(writer.stats().droppedByUrl, {});
      const { seqs } = await readBack(path);
      assert.deepEqual(seqs.get('/camera'), range(400), 'every camera frame, in order');
      assert.deepEqual(seqs.get('/state'), [0]);
    });
  }

  test('syncMode has no queue: source limits do not apply', async () => {
    const path = join(dir, `sync-${n++}.vcap`);
    const writer = await BagWriter.create(path, {
      syncMode: true,
      summary: false,
      sources: { '/camera': { maxFrames: 1, maxBytes: 1 } },
    });
    assert.deepEqual(
      range(5).map((i) => writer.push(frame('/camera', i, 64, i))),
      range(5),
    );
    await writer.close();
    assert.deepEqual((await readBack(path)).seqs.get('/camera'), range(5));
  });

  test('bad source specs are refused with INVALID_ARGUMENT', async () => {
    const bad: Array<BagWriterOptions['sources']> = [
      { cam: { maxFrames: 0 } },
      { cam: { maxBytes: 1.5 } },
      { cam: { urls: [] } },
      { a: { urls: ['/x'] }, b: { urls: ['/x'] } },
      { cam: { urls: ['*'] } },
    ];
    for (const sources of bad)
      await assert.rejects(BagWriter.create(join(dir, `bad-${n++}.vcap`), { sources }), {
        code: 'INVALID_ARGUMENT',
      });
  });
});
