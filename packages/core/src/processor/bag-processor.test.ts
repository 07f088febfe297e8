import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { BagProcessor } from './bag-processor.js';
import type { ProcessorConfig } from './processor-config.js';

const frame = (timestamp: number, url: string, bytes = 1): Frame => ({
  timestamp,
  url,
  data: new Uint8Array(bytes),
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
});

/** A processor whose output is logged as `url@outputTimestamp`. */
function make(config: Partial<ProcessorConfig> = {}) {
  const processor = new BagProcessor(config);
  const out: string[] = [];
  processor.registerOutputCallback((f) => out.push(`${f.url}@${f.timestamp}`));
  return { processor, out };
}

describe('BagProcessor (format reference §8)', () => {
  test('interleaved sources come out in data time; one frame released per check', async () => {
    const { processor, out } = make();
    processor.push(1_000_000, frame(0, 'A'));
    processor.push(1_100_000, frame(10, 'B'));
    processor.push(1_050_000, frame(20, 'C'));
    await processor.idle();
    assert.deepEqual(out, [], 'a 100 ms span is inside the 500 ms window');
    processor.push(1_600_000, frame(30, 'D'));
    await processor.idle();
    // D is 600 ms newer than A → A; 550 ms newer than C → C; exactly 500 ms newer than B → B (≥); then D waits.
    assert.deepEqual(out, ['A@0', 'C@50000', 'B@100000']);
    processor.flush();
    assert.deepEqual(out, ['A@0', 'C@50000', 'B@100000', 'D@600000']);
  });

  test('a late frame is released next and bumped to keep output strictly increasing (+1 µs)', async () => {
    const { processor, out } = make();
    processor.push(1_000_000, frame(0, 'A'));
    processor.push(1_100_000, frame(10, 'B'));
    processor.push(1_650_000, frame(30, 'D'));
    await processor.idle();
    assert.deepEqual(out, ['A@0', 'B@100000']);
    processor.push(1_020_000, frame(40, 'late'));
    await processor.idle();
    assert.deepEqual(out, ['A@0', 'B@100000', 'late@100001']);
    processor.flush();
    assert.equal(out.at(-1), 'D@650000');
  });

  test('a data timestamp jumping more than maxJumpTime takes the recording-time delta', () => {
    const { processor, out } = make({ maxJumpTime: 1000 });
    processor.push(5_000_000, frame(1000, 'A'));
    processor.push(9_000_000, frame(2000, 'jump')); // 4 s away → 5_000_000 + (2000 − 1000)
    processor.push(5_002_000, frame(3000, 'C')); // close to the replaced anchor: kept
    processor.push(5_000_500, frame(3500, 'D'));
    processor.flush();
    assert.deepEqual(out, ['A@1000', 'D@1500', 'jump@2000', 'C@3000']);
    const off = make({ maxJumpTime: 0 });
    off.processor.push(5_000_000, frame(1000, 'A'));
    off.processor.push(9_000_000, frame(2000, 'far'));
    off.processor.flush();
    assert.deepEqual(off.out, ['A@1000', 'far@4001000']);
  });

  test('negative data timestamps: invalid before any valid one, filled from the anchor after', async () => {
    const { processor, out } = make();
    processor.push(-1, frame(100, 'n1'));
    processor.push(-1, frame(50, 'n2'));
    processor.push(2_000_000, frame(300, 'A'));
    processor.push(-1, frame(400, 'filled')); // 2_000_000 + (400 − 300)
    await processor.idle();
    // Invalid entries sort first (by recording time) and go while the queue mixes validity.
    assert.deepEqual(out, ['n2@50', 'n1@100']);
    processor.flush();
    assert.deepEqual(out, ['n2@50', 'n1@100', 'A@300', 'filled@400']);
  });

  test('the first valid frame anchors the timeline at its (monotonic) output timestamp', () => {
    const { processor, out } = make();
    processor.push(-1, frame(500, 'invalid'));
    processor.push(7_000_000, frame(300, 'first'));
    processor.push(7_000_010, frame(301, 'second'));
    processor.flush();
    assert.deepEqual(out, ['invalid@500', 'first@501', 'second@511']);
  });

  test('equal keys keep push order (stable) and are spread by 1 µs', () => {
    const { processor, out } = make();
    processor.push(1000, frame(10, 'x1'));
    processor.push(1000, frame(5, 'x2'));
    processor.push(999, frame(7, 'x0'));
    processor.push(1000, frame(7, 'x3'));
    processor.flush();
    assert.deepEqual(out, ['x0@7', 'x1@8', 'x2@9', 'x3@10']);
  });

  test('flush starts a new timeline; reset discards without emitting', async () => {
    const { processor, out } = make();
    processor.push(9_000_000, frame(500, 'A'));
    processor.flush();
    processor.push(1_000, frame(77, 'B')); // far from A's data time, but anchors were reset: no jump rule, no bump
    processor.flush();
    assert.deepEqual(out, ['A@500', 'B@77']);
    processor.push(5_000, frame(1, 'dropped'));
    processor.push(6_000, frame(2, 'dropped'));
    processor.reset();
    processor.push(3_000_000, frame(3, 'C'));
    await processor.idle();
    processor.flush();
    assert.deepEqual(out, ['A@500', 'B@77', 'C@3']);
    assert.deepEqual(processor.stats(), { frames: 0, bytes: 0 });
  });

  test('backpressure: push returns false at maxCacheSize; waitForRoom resolves once the oldest went out', async () => {
    const { processor, out } = make({ maxCacheSize: 10 });
    assert.equal(processor.push(1_000, frame(1, 'a', 4)), true);
    assert.equal(processor.push(2_000, frame(2, 'b', 4)), true);
    assert.equal(processor.push(3_000, frame(3, 'c', 4)), false);
    assert.deepEqual(processor.stats(), { frames: 3, bytes: 12 });
    await processor.waitForRoom();
    assert.deepEqual(out, ['a@1']);
    assert.deepEqual(processor.stats(), { frames: 2, bytes: 8 });
    processor.push(4_000, frame(4, 'd', 4));
    processor.releaseOverflow(); // what a plugin host does: no waiting, same frames released
    assert.deepEqual(out, ['a@1', 'b@1001']);
    processor.close();
    assert.deepEqual(out, ['a@1', 'b@1001', 'c@2001', 'd@3001']);
    assert.throws(() => processor.push(5_000, frame(5, 'e')), { code: 'CLOSED' });
  });

  test('payloads are copied on push (readers reuse buffers)', () => {
    const processor = new BagProcessor();
    const got: number[] = [];
    processor.registerOutputCallback((f) => got.push(f.data[0]!));
    const f = frame(1, 'a');
    f.data[0] = 7;
    processor.push(1, f);
    f.data[0] = 9;
    processor.flush();
    assert.deepEqual(got, [7]);
  });

  test('without the optional drain a quiet tail waits; with drainAfterMs it is released', async () => {
    const held = make();
    held.processor.push(1_000, frame(1, 'tail'));
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.deepEqual(held.out, []);
    const drained = new BagProcessor({ drainAfterMs: 20 });
    const pushedAt = performance.now();
    const releasedAt = new Promise<number>((resolve) =>
      drained.registerOutputCallback(() => resolve(performance.now())),
    );
    drained.push(1_000, frame(1, 'tail'));
    const at = await releasedAt;
    assert.ok(at - pushedAt >= 19, `released after ${at - pushedAt} ms`);
  });

  test('a throwing output callback is reported, the queue keeps going', () => {
    const processor = new BagProcessor();
    const seen: string[] = [];
    processor.registerErrorCallback((e) => seen.push(e.code));
    processor.registerOutputCallback((f) => {
      if (f.url === 'bad') throw new Error('nope');
      seen.push(f.url);
    });
    processor.push(1, frame(1, 'bad'));
    processor.push(2, frame(2, 'good'));
    processor.flush();
    assert.deepEqual(seen, ['INTERNAL', 'good']);
    assert.match(processor.getLastError()!.message, /nope/);
  });

  test('bad config is a typed error', () => {
    assert.throws(() => new BagProcessor({ minCacheTime: -1 }), { code: 'INVALID_ARGUMENT' });
  });

  // Before: a null frame or a missing payload threw TypeErrors, a string payload or a number url was queued and
  // emitted as if valid, a string data timestamp was taken for "unknown".
  test('a frame a writer would refuse as malformed is INVALID_ARGUMENT, and nothing is queued', () => {
    const { processor } = make();
    const good = frame(1, 'a');
    for (const [bad, ts, message] of [
      [null, 1, /^a frame must be an object, not null$/],
      [{ ...good, data: 'x' }, 1, /^frame data must be a Uint8Array/],
      [{ ...good, data: undefined }, 1, /^frame data must be a Uint8Array/],
      [{ ...good, url: 5 }, 1, /^frame url must not be empty$/],
      [{ ...good, serType: 5 }, 1, /^frame serType must be a string, not number/],
      [good, '5', /^the data timestamp must be a number of µs/],
    ] as const)
      assert.throws(() => processor.push(ts as never, bad as never), { code: 'INVALID_ARGUMENT', message });
    assert.deepEqual(processor.stats(), { frames: 0, bytes: 0 });
    processor.close();
  });
});
