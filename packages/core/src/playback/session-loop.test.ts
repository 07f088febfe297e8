import assert from 'node:assert/strict';
import { copyFileSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import type { Backend, CursorQuery } from '../backend/backend.js';
import { registerBackend } from '../backend/registry.js';
import type { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
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
  test('stop from the ready callback ends the pass before its first frame, never showing Playing', async () => {
    const { reader, events, order } = await open([[0, 'a']]);
    reader.registerReadyCallback(() => {
      events.push('ready');
      void reader.stop();
    });
    assert.equal(await reader.play({ forceDelay: 0 }).finished, true);
    assert.deepEqual(order, []);
    // A pass that went on to its first frame's wait would report status:2 (Playing) then status:0 first.
    assert.deepEqual(events, ['ready', 'finish:true']);
    reader.close();
  });

  test('a jump from the ready callback replaces the pass before its first frame', async () => {
    const { reader, events, order } = await open([
      [0, 'a'],
      [100_000, 'b'],
    ]);
    let jumped = false;
    reader.registerReadyCallback(() => {
      events.push('ready');
      if (jumped) return;
      jumped = true;
      void reader.jump(100);
    });
    const playback = reader.play({ forceDelay: 0 });
    await until(() => order.length > 0 && reader.getStatus() === 0);
    assert.deepEqual(order, ['b'], 'nothing of the replaced pass');
    // The replaced pass never reports Playing: the status changes once, in the pass the jump started.
    assert.deepEqual(events.slice(0, 3), ['ready', 'ready', 'status:2']);
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

  test('a queued play() with autoPause starts paused: its first frame waits for pauseToNext', async () => {
    const { reader, order } = await open([
      [0, 'a'],
      [1000, 'b'],
    ]);
    const first = reader.play({ forceDelay: 0, autoPause: true });
    await until(() => reader.getStatus() === 1);
    const second = reader.play({ forceDelay: 0, autoPause: true });
    reader.pauseToNext();
    await until(() => order.length === 1);
    reader.pauseToNext();
    assert.equal(await first.finished, false);
    // The queued session clears the step flag of the first one before pausing: a step left set would emit its a now.
    await until(() => reader.getStatus() === 1);
    await sleep(300);
    assert.deepEqual(order, ['a', 'b']);
    assert.equal(reader.pauseToNext(), true);
    await until(() => order.length === 3);
    await sleep(100);
    assert.deepEqual(order, ['a', 'b', 'a'], 'one step, one frame');
    void reader.stop();
    assert.equal(await second.finished, true);
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

describe('session loop: what a pass holds while it plays', () => {
  test('forceDelay 0 with a slow consumer lets timers run about every 8 ms, not only after the pass', async () => {
    const total = 300;
    const rows = Array.from({ length: total }, (_, i) => [i * 1000, 'a'] as const);
    const { reader, order } = await open(rows);
    // 0.3 ms per frame: 32 frames (the loop's check interval) take longer than its 8 ms slice.
    reader.registerOutputCallback((frame) => {
      order.push(frame.url);
      const busyUntil = performance.now() + 0.3;
      while (performance.now() < busyUntil);
    });
    const seen = new Set<number>();
    let sampling = true;
    const sample = () => {
      seen.add(order.length);
      if (sampling) setTimeout(sample, 1);
    };
    setTimeout(sample, 1);
    assert.equal(await reader.play({ forceDelay: 0 }).finished, false);
    sampling = false;
    assert.equal(order.length, total);
    // A loop that never yields runs the whole pass in one task: timers see 0 frames, then all of them.
    const midway = [...seen].filter((n) => n > 0 && n < total);
    assert.ok(midway.length >= 2, `timers saw ${[...seen].sort((x, y) => x - y).join(', ')} frames delivered`);
    reader.close();
  });

  test('a stopped pass closes its backend cursor at once, not when the reader closes', async () => {
    // A backend cursor can hold a resource (a SQLite statement keeps its read transaction open): this one says
    // when it is closed.
    const cursors = { opened: 0, closed: 0 };
    function* tracked(frames: IterableIterator<Frame>): IterableIterator<Frame> {
      cursors.opened++;
      try {
        yield* frames;
      } finally {
        cursors.closed++;
      }
    }
    const trackingBackend: Backend = {
      name: 'memory-cursor-tracking',
      extensions: ['.cursorjson'],
      readOnly: true,
      createWriter: (path, config, context) => memoryBackend.createWriter(path, config, context),
      async openReader(path, options) {
        const inner = await memoryBackend.openReader(path, options);
        const frames = inner.frames.bind(inner);
        inner.frames = (query: CursorQuery) => tracked(frames(query));
        return inner;
      },
    };
    registerBackend(trackingBackend);
    const path = `${bags.path()}.cursorjson`;
    copyFileSync(
      await bags.write([
        [0, 'a'],
        [2_000_000, 'b'],
      ]),
      path,
    );
    const reader = await BagReader.create(path);
    const order: string[] = [];
    reader.registerOutputCallback((frame) => void order.push(frame.url));
    const playback = reader.play();
    await until(() => order.length === 1);
    await reader.stop();
    assert.equal(await playback.finished, true);
    assert.deepEqual(order, ['a']);
    assert.deepEqual(cursors, { opened: 1, closed: 1 });
    reader.close();
  });
});
