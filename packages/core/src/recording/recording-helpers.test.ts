import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { parseCompanionMeta } from '../model/companion-meta.js';
import type { Frame } from '../model/frame.js';
import { ActionRecorder } from './action-recorder.js';
import type { FrameSink } from './frame-sink.js';
import { SnapshotSampler } from './snapshot-sampler.js';

// The recording helpers against a sink that keeps what it is given, driven by a clock the test sets.

class KeepingSink implements FrameSink {
  readonly frames: Frame[] = [];
  readonly counters = new Map<string, number>();
  refuse = false;
  push(frame: Frame): number {
    if (this.refuse) return -1;
    this.frames.push(frame);
    return frame.timestamp;
  }
  count(url: string, cause: string, n = 1): void {
    const key = `${url} ${cause}`;
    this.counters.set(key, (this.counters.get(key) ?? 0) + n);
  }
}

const text = new TextDecoder();
const encoder = new TextEncoder();

function setup(overrides: Partial<ConstructorParameters<typeof SnapshotSampler<number>>[0]> = {}) {
  const sink = new KeepingSink();
  let now = 0;
  const sampler = new SnapshotSampler<number>({
    sink,
    url: '/state',
    components: ['arm', 'gripper'],
    rateHz: 100,
    clock: () => now,
    encode: (s) => encoder.encode(JSON.stringify({ arm: s.components.arm!.value, grip: s.components.gripper!.value })),
    maxAgeUs: 15_000,
    maxSpanUs: 8_000,
    ...overrides,
  });
  return { sink, sampler, at: (us: number) => (now = us) };
}

describe('SnapshotSampler', () => {
  test('records complete fresh snapshots with publish = tick, meta with component times and versions', () => {
    const { sink, sampler, at } = setup();
    at(1_000);
    sampler.update('arm', 1, { version: 7, sampleUs: 500 });
    at(2_000);
    sampler.update('gripper', 2);
    at(10_000);
    const first = sampler.tick();
    assert.deepEqual(first, { recorded: true, timestamp: 10_000, publishTime: 10_000, slot: 0, missedSlots: 0 });
    assert.equal(sink.frames.length, 2);
    const [frame, meta] = sink.frames as [Frame, Frame];
    assert.equal(text.decode(frame.data), '{"arm":1,"grip":2}');
    assert.equal(frame.publishTime, 10_000);
    assert.equal(meta.url, '/state/meta');
    assert.equal(meta.timestamp, 10_000);
    assert.deepEqual(parseCompanionMeta(meta), {
      components: {
        arm: { sampleUs: 500, receivedUs: 1_000, version: 7 },
        gripper: { sampleUs: 2_000, receivedUs: 2_000, version: 1 },
      },
      slot: 0,
      rateHz: 100,
    });
    assert.deepEqual(sampler.stats(), { ticks: 1, recorded: 1, skipped: {}, refused: 0 });
  });

  test('each kind of skip is counted on the url under its cause, one per tick, in order', () => {
    const { sink, sampler, at } = setup();
    at(0);
    sampler.update('arm', 1);
    assert.deepEqual(sampler.tick(), { recorded: false, skip: 'incompleteSnapshot', slot: 0, missedSlots: 0 });
    at(10_000);
    sampler.update('gripper', 1); // arm is 10 ms old, gripper new: span 10 ms > 8 ms
    assert.equal((sampler.tick() as { skip: string }).skip, 'skewedSnapshot');
    at(30_000); // both older than 15 ms (stale wins over skewed); slot 2 passed without a tick
    assert.equal((sampler.tick() as { skip: string }).skip, 'staleSnapshot');
    at(40_000);
    sampler.update('arm', 2);
    sampler.update('gripper', 2);
    assert.equal(sampler.tick().recorded, true);
    at(50_000); // nothing new since the recorded snapshot
    assert.equal((sampler.tick() as { skip: string }).skip, 'duplicateSample');
    at(60_000);
    sampler.update('arm', 3, { version: 1 }); // a new version of one component is enough by default
    sampler.update('gripper', 3, { version: 2 }); // fresh, but the version recorded at 40 ms: not new
    assert.equal(sampler.tick().recorded, true);
    at(90_400); // slots 7 and 8 passed without a tick; 9 is within half a period
    sampler.update('arm', 4, { version: 2 });
    sampler.update('gripper', 4);
    const late = sampler.tick();
    assert.deepEqual(late, { recorded: true, timestamp: 90_400, publishTime: 90_400, slot: 9, missedSlots: 2 });
    at(93_000); // still slot 9: not a tick
    assert.deepEqual(sampler.tick(), { recorded: false, skip: 'sameSlot', slot: 9, missedSlots: 0 });
    const expected = {
      incompleteSnapshot: 1,
      skewedSnapshot: 1,
      staleSnapshot: 1,
      duplicateSample: 1,
      missedSlot: 3,
    };
    assert.deepEqual(sampler.stats(), { ticks: 7, recorded: 3, skipped: expected, refused: 0 });
    assert.deepEqual(
      Object.fromEntries(sink.counters),
      Object.fromEntries(Object.entries(expected).map(([cause, n]) => [`/state ${cause}`, n])),
    );
    assert.deepEqual(
      sink.frames.filter((f) => f.url === '/state').map((f) => f.publishTime),
      [40_000, 60_000, 90_400],
    );
  });

  test("requireNew 'all' needs a new version of every component; a refused frame is not counted as recorded", () => {
    const { sink, sampler, at } = setup({ requireNew: 'all', maxAgeUs: undefined, maxSpanUs: undefined });
    sampler.update('arm', 1);
    sampler.update('gripper', 1);
    assert.equal(sampler.tick().recorded, true);
    at(10_000);
    sampler.update('arm', 2);
    assert.equal((sampler.tick() as { skip: string }).skip, 'duplicateSample');
    at(20_000);
    sampler.update('gripper', 2);
    sink.refuse = true;
    assert.equal((sampler.tick() as { skip: string }).skip, 'refused');
    sink.refuse = false;
    at(30_000); // the refused snapshot did not become the reference: still new
    assert.equal(sampler.tick().recorded, true);
    assert.deepEqual(sampler.stats(), { ticks: 4, recorded: 2, skipped: { duplicateSample: 1 }, refused: 1 });
  });

  test('bad options, unknown components and a broken clock are refused with INVALID_ARGUMENT', () => {
    const invalid = { code: 'INVALID_ARGUMENT' };
    assert.throws(() => setup({ rateHz: 0 }), invalid);
    assert.throws(() => setup({ components: [] }), invalid);
    assert.throws(() => setup({ components: ['a', 'a'] }), invalid);
    assert.throws(() => setup({ url: '' }), invalid);
    assert.throws(() => setup({ maxAgeUs: -1 }), invalid);
    const { sampler } = setup({ clock: () => Number.NaN });
    assert.throws(() => sampler.update('nope', 1), invalid);
    assert.throws(() => sampler.tick(), invalid);
  });
});

describe('ActionRecorder', () => {
  test('publish = submit start, log = end; result in the companion metadata; partial and failed counted', async () => {
    const sink = new KeepingSink();
    let now = 100;
    const actions = new ActionRecorder({ sink, url: '/action', clock: () => now, serType: 'json' });
    const stamp = actions.begin();
    now = 350;
    const full = actions.finish(stamp, encoder.encode('{"v":1}'), 'full');
    assert.deepEqual(full, { startUs: 100, endUs: 350, result: 'full', timestamp: 350 });
    now = 1_000;
    const partial = await actions.submit(encoder.encode('{"v":2}'), () => {
      now = 1_800;
      return 'partial';
    });
    assert.deepEqual(partial, { startUs: 1_000, endUs: 1_800, result: 'partial', timestamp: 1_800 });
    now = 2_000;
    await assert.rejects(
      actions.submit(encoder.encode('{"v":3}'), async () => {
        now = 2_500;
        throw new Error('controller busy');
      }),
      /controller busy/,
    );
    const actionFrames = sink.frames.filter((f) => f.url === '/action');
    assert.deepEqual(
      actionFrames.map((f) => [f.publishTime, f.timestamp, text.decode(f.data)]),
      [
        [100, 350, '{"v":1}'],
        [1_000, 1_800, '{"v":2}'],
        [2_000, 2_500, '{"v":3}'],
      ],
    );
    const metas = sink.frames.filter((f) => f.url === '/action/meta');
    assert.deepEqual(
      metas.map((f) => [f.timestamp, f.publishTime, parseCompanionMeta(f).submit]),
      [
        [350, 100, { startUs: 100, endUs: 350, result: 'full' }],
        [1_800, 1_000, { startUs: 1_000, endUs: 1_800, result: 'partial' }],
        [2_500, 2_000, { startUs: 2_000, endUs: 2_500, result: 'failed', detail: 'controller busy' }],
      ],
    );
    assert.deepEqual(Object.fromEntries(sink.counters), { '/action submitPartial': 1, '/action submitFailed': 1 });
    assert.deepEqual(actions.stats(), { full: 1, partial: 1, failed: 1, refused: 0 });
    assert.throws(() => actions.finish(stamp, new Uint8Array(), 'done' as 'full'), { code: 'INVALID_ARGUMENT' });
  });
});
