import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SourceQueues } from './source-queues.js';

/**
 * The shared queue holding `frames` frames of `bytes` bytes, with its limits and `write()`'s mark at half its depth
 * (`markDepth` to size it otherwise).
 */
function queue(frames: number, bytes: number, depth: number, maxBytes: number, markDepth = depth / 2) {
  return { frames, bytes, depth, maxBytes, markDepth };
}

describe('SourceQueues', () => {
  test('urls resolve to the named source: exact first, then the longest prefix, else a source of their own', () => {
    const q = new SourceQueues({
      cameras: { urls: ['/camera/*'], maxFrames: 3 },
      front: { urls: ['/camera/front/*', '/lidar'] },
      '/state': { maxBytes: 100 },
    });
    assert.equal(q.of('/camera/left').name, 'cameras');
    assert.equal(q.of('/camera/front/raw').name, 'front');
    assert.equal(q.of('/lidar').name, 'front');
    assert.equal(q.of('/state').name, '/state');
    assert.equal(q.of('/state').maxBytes, 100);
    assert.equal(q.of('/other').name, '/other');
    assert.equal(q.of('/other').maxFrames, Number.POSITIVE_INFINITY);
    assert.equal(q.of('/camera/left'), q.of('/camera/right'), 'one queue for the group');
  });

  test('admission: own limits, then the shared ones, then the fair share once the shared queue is full', () => {
    const q = new SourceQueues({ cam: { maxFrames: 2 } });
    const cam = q.of('cam');
    const a = q.of('a');
    const b = q.of('b');
    q.add(cam, 10, false);
    q.add(cam, 10, false);
    assert.deepEqual(q.admit(cam, 10, queue(2, 20, 100, 1000))?.reason, 'queueDepth', 'own frame limit');
    // Shared queue of 6 frames, full: a holds 4, b none, cam 2. Three sources share it: 2 frames each.
    for (let i = 0; i < 4; i++) q.add(a, 10, false);
    assert.equal(q.admit(a, 10, queue(6, 60, 6, 1000))?.reason, 'queueDepth', 'a is over its share');
    assert.equal(q.admit(b, 10, queue(6, 60, 6, 1000)), undefined, 'b is below its share');
    q.add(b, 10, false);
    q.add(b, 10, false);
    assert.equal(q.admit(b, 10, queue(8, 80, 6, 1000))?.reason, 'queueDepth', 'b reached its share');
    assert.equal(q.admit(b, 10, queue(8, 80, 6, 1000))?.message, 'queue depth limit');
    q.release(b, 2, 20);
    assert.equal(q.admit(b, 10, queue(11, 110, 6, 1000)), undefined, 'below its share and below twice the limit');
    assert.equal(q.admit(b, 10, queue(12, 120, 6, 1000))?.reason, 'queueDepth', 'twice the shared limit is a hard cap');
    assert.equal(q.admit(b, 10, queue(5, 1995, 6, 1000))?.reason, 'queueMemory', 'in bytes too');
    q.add(b, 10, false);
    q.add(b, 10, false);
    // Bytes: the shared memory is full. a (140 bytes) is over its share (270 / 2: b holds nothing), b is not (270 / 3).
    q.release(b, 2, 20);
    q.add(a, 100, false);
    assert.equal(q.admit(a, 50, queue(6, 260, 100, 270))?.reason, 'queueMemory');
    assert.equal(q.admit(b, 50, queue(6, 260, 100, 270)), undefined);
  });

  test('hasRoom is the high-water mark: half of every limit', () => {
    const q = new SourceQueues({ cam: { maxFrames: 4, maxBytes: 1000 } });
    const cam = q.of('cam');
    assert.equal(q.hasRoom('cam', 10, queue(0, 0, 100, 10_000)), true);
    q.add(cam, 10, false);
    assert.equal(q.hasRoom('cam', 10, queue(1, 10, 100, 10_000)), true);
    q.add(cam, 10, false);
    assert.equal(q.hasRoom('cam', 10, queue(2, 20, 100, 10_000)), false, 'two of four frames');
    q.release(cam, 2, 20);
    q.add(cam, 400, false);
    assert.equal(q.hasRoom('cam', 200, queue(1, 400, 100, 10_000)), false, 'over half its bytes');
    assert.equal(q.hasRoom('x', 10, queue(60, 400, 100, 10_000)), true, 'another source within its half share');
    // The shared mark in frames as the engine sizes it (a worker's: 25 ms of its rate), not always half the depth.
    const y = q.of('y');
    for (let i = 0; i < 25; i++) q.add(y, 10, false);
    assert.equal(q.hasRoom('y', 10, queue(39, 650, 100, 10_000, 40)), true);
    assert.equal(q.hasRoom('y', 10, queue(40, 650, 100, 10_000)), true, 'below half the depth');
    assert.equal(q.hasRoom('y', 10, queue(40, 650, 100, 10_000, 40)), false, 'at the mark, y over its share (40 / 2)');
  });

  test('batches: frames leave their source when the worker is done with the batch, or when it was lost', () => {
    const q = new SourceQueues();
    const a = q.of('a');
    const b = q.of('b');
    q.add(a, 5, true);
    q.add(b, 7, true);
    q.add(a, 5, true);
    q.seal(1);
    q.add(b, 7, true);
    q.seal(2);
    q.add(a, 1, true);
    q.seal(3);
    assert.deepEqual([a.frames, a.bytes, b.frames, b.bytes], [3, 11, 2, 14]);
    q.doneUpTo(1);
    assert.deepEqual([a.frames, a.bytes, b.frames, b.bytes], [1, 1, 1, 7]);
    q.discard(3);
    assert.deepEqual([a.frames, a.bytes], [0, 0]);
    q.discard(3);
    assert.deepEqual([a.frames, b.frames], [0, 1], 'a discarded batch is released once');
    q.doneUpTo(Number.POSITIVE_INFINITY);
    assert.deepEqual([b.frames, b.bytes], [0, 0]);
  });
});
