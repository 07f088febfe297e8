import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import type { BagError } from '../errors.js';
import { BagReader } from '../reader/bag-reader.js';
import { recordEvents, sleep, TempBags, until } from './test-bags.test.helper.js';

// The session loop's decisions, each pinned by a test that fails when the decision is dropped or inverted (found by
// mutation testing, scripts/mutation.mjs). Times are wide enough for a loaded machine; each case says what the
// broken loop would do instead.
const bags = new TempBags();
after(() => bags.remove());

async function open(rows: ReadonlyArray<readonly [number, string]>) {
  const reader = await BagReader.create(await bags.write(rows));
  const at = new Map<string, number>();
  const recorded = recordEvents(reader);
  const order: string[] = [];
  reader.registerOutputCallback((frame) => {
    at.set(frame.url, performance.now());
    order.push(frame.url);
  });
  return { reader, at, order, ...recorded };
}

/** Resolves with the promise's value, or 'still running' after `ms`. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, sleep(ms).then(() => 'still running' as const)]);

describe('session loop: pacing decisions', () => {
  test('forceDelay 0: after a resume the frames go out at once, not at their timestamps (5 s away)', async () => {
    const { reader, order } = await open([
      [0, 'a'],
      [5_000_000, 'b'],
    ]);
    const playback = reader.play({ forceDelay: 0, autoPause: true });
    await until(() => reader.getStatus() === 1);
    // Step to a: b then waits, paused, in waitFor(); after the resume it must go at once, not at 5 s.
    reader.pauseToNext();
    await until(() => order.length === 1 && reader.getStatus() === 1);
    reader.resume();
    assert.equal(await within(playback.finished, 2500), false);
    assert.deepEqual(order, ['a', 'b']);
    reader.close();
  });

  test('forceDelay 50 replaces the timestamps: a 2 s gap plays in about 50 ms', async () => {
    const { reader, at } = await open([
      [0, 'a'],
      [2_000_000, 'b'],
    ]);
    assert.equal(await reader.play({ forceDelay: 50 }).finished, false);
    const gap = at.get('b')! - at.get('a')!;
    assert.ok(gap >= 45 && gap < 1000, `b came ${gap.toFixed(1)} ms after a`);
    reader.close();
  });

  test('a step during a fixed delay (forceDelay 3000) emits the frame at once', async () => {
    const { reader, at } = await open([
      [0, 'a'],
      [1000, 'b'],
    ]);
    const playback = reader.play({ forceDelay: 3000, autoPause: true });
    await until(() => reader.getStatus() === 1);
    const stepped = performance.now();
    assert.equal(reader.pauseToNext(), true);
    await until(() => at.has('a'), 2500);
    assert.ok(at.get('a')! - stepped < 1500);
    reader.stop();
    assert.equal(await playback.finished, true);
    reader.close();
  });

  test('a pause late in a long wait delays the frame by the pause only (1 s schedule + 150 ms paused)', async () => {
    const { reader, at } = await open([
      [0, 'a'],
      [1_000_000, 'b'],
    ]);
    const playback = reader.play();
    await until(() => at.has('a'));
    await sleep(600);
    reader.pause();
    await sleep(150);
    reader.resume();
    assert.equal(await playback.finished, false);
    const gap = at.get('b')! - at.get('a')!;
    // A clock frozen from the pass start (not from the pause) would count the 600 ms before it as paused: ≈ 1750 ms.
    assert.ok(gap >= 1140 && gap < 1600, `b came ${gap.toFixed(1)} ms after a`);
    reader.close();
  });
});

describe('session loop: the position while a pass plays', () => {
  // The pass clears `seeking` once it is open; left set, getTimestamp() would stick at the last frame's time.
  test('getTimestamp() moves on between two frames 1 s apart, and stops at 0 after the pass', async () => {
    const { reader, at } = await open([
      [0, 'a'],
      [1_000_000, 'b'],
    ]);
    const playback = reader.play();
    await until(() => at.has('a'));
    await sleep(400);
    const midway = reader.getTimestamp();
    assert.ok(midway >= 300 && midway < 1000, `getTimestamp() ${midway} ms, 400 ms after a frame at 0`);
    assert.equal(await playback.finished, false);
    assert.equal(reader.getTimestamp(), 0, 'stopped');
    reader.close();
  });
});

describe('session loop: control before the first frame and session ends', () => {
  test('stop from the ready callback ends the pass before its first frame', async () => {
    const { reader, events, order } = await open([[0, 'a']]);
    reader.registerReadyCallback(() => reader.stop());
    assert.equal(await reader.play({ forceDelay: 0 }).finished, true);
    assert.deepEqual(order, []);
    assert.equal(events.at(-1), 'finish:true');
    reader.close();
  });

  test('a jump from the ready callback replaces the pass before its first frame', async () => {
    const { reader, order } = await open([
      [0, 'a'],
      [100_000, 'b'],
    ]);
    let jumped = false;
    reader.registerReadyCallback(() => {
      if (jumped) return;
      jumped = true;
      void reader.jump(100);
    });
    const playback = reader.play({ forceDelay: 0 });
    await until(() => order.length > 0 && reader.getStatus() === 0);
    assert.deepEqual(order, ['b'], 'nothing of the replaced pass');
    reader.stop();
    await playback.finished;
    reader.close();
  });

  test('an empty window ends the session even with endless passes (times 0)', async () => {
    const { reader, events } = await open([[0, 'a']]);
    const playback = reader.play({ beginTime: 500, times: 0 });
    assert.equal(await within(playback.finished, 2500), false);
    assert.deepEqual(events, ['ready', 'finish:false'], 'one pass: ready once, nothing played');
    reader.close();
  });

  test('play() while a paused session runs: the next session starts unpaused once the first one ends', async () => {
    const { reader, order } = await open([
      [0, 'a'],
      [1000, 'b'],
    ]);
    const first = reader.play({ forceDelay: 0, autoPause: true });
    await until(() => reader.getStatus() === 1);
    const second = reader.play({ forceDelay: 0 });
    // Step the first session to its end: it stays paused throughout, and the queued one must not inherit that.
    reader.pauseToNext();
    await until(() => order.length === 1);
    reader.pauseToNext();
    assert.equal(await first.finished, false);
    assert.equal(await within(second.finished, 2500), false);
    assert.deepEqual(order, ['a', 'b', 'a', 'b']);
    reader.close();
  });

  test('a throwing callback is reported as IO_ERROR "playback failed: <its message>"', async () => {
    const { reader } = await open([[0, 'a']]);
    const errors: BagError[] = [];
    reader.registerErrorCallback((e) => errors.push(e));
    reader.registerOutputCallback(() => {
      throw new Error('boom');
    });
    assert.equal(await reader.play({ forceDelay: 0 }).finished, true);
    assert.equal(errors.length, 1);
    assert.equal(errors[0]!.code, 'IO_ERROR');
    assert.equal(errors[0]!.message, 'playback failed: boom');
    reader.close();
  });
});
