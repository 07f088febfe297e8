import assert from 'node:assert/strict';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { join } from 'node:path';
import { BagReader, type Frame } from '@vlink/bag';
import { buildFixtureRoot, type FixtureRoot } from '../testing/fixtures.js';
import { ReplaySession, SEND_BUFFER_HIGH, type ReplayOutput, type StatusEvent } from './replay-session.js';

let fx: FixtureRoot;
before(async () => {
  fx = await buildFixtureRoot();
});
after(() => fx?.cleanup());

/** An output whose queued bytes the test controls, standing in for a slow WebSocket client. */
function fakeOutput() {
  const state = {
    buffered: 0,
    highCalls: 0,
    frames: [] as number[],
    statuses: [] as StatusEvent[],
    finished: [] as Array<{ interrupted: boolean; dropped: number }>,
  };
  let onFinish: (() => void) | undefined;
  const out: ReplayOutput = {
    buffered: () => {
      if (state.highCalls === 0) return state.buffered;
      state.highCalls--;
      return SEND_BUFFER_HIGH + 1;
    },
    frame: (f: Frame) => void state.frames.push(f.timestamp),
    status: (e) => void state.statuses.push(e),
    finished: (interrupted, dropped) => {
      state.finished.push({ interrupted, dropped });
      onFinish?.();
    },
    error: (e) => assert.fail(e.message),
  };
  const finished = () => new Promise<void>((resolve) => (onFinish = resolve));
  return { state, out, finished };
}

function source() {
  const path = join(fx.root, 'drive.vdb');
  return {
    lease: async () => {
      const reader = await BagReader.create(path);
      return { reader, release: () => reader.close() };
    },
    durationMs: async () => 1200,
  };
}

describe('ReplaySession backpressure', () => {
  test('paced replay drops frames while the client is backed up, counts them, and resumes sending', async () => {
    const { state, out, finished } = fakeOutput();
    const session = new ReplaySession(source(), out);
    const done = finished();
    state.highCalls = 5; // backed up for the first five frames
    session.play({ rate: 10, beginMs: 0, endMs: 300, times: 1, paused: false });
    await done;
    session.close();
    const { dropped } = state.finished[0]!;
    assert.equal(dropped, 5, 'the frames due while backed up were dropped');
    assert.equal(state.frames[0], 51_000, 'sending resumed with the next frame');
    assert.equal(dropped + state.frames.length, 30, 'every frame of the window was either sent or counted');
    assert.equal(state.statuses.at(-1)!.dropped, dropped);
  });

  test('rate 0 waits for the client to drain and loses nothing', async () => {
    const { state, out, finished } = fakeOutput();
    const session = new ReplaySession(source(), out);
    const done = finished();
    state.buffered = SEND_BUFFER_HIGH + 1;
    session.play({ rate: 0, beginMs: 0, times: 1, paused: false });
    await new Promise((r) => setTimeout(r, 40));
    assert.ok(state.frames.length <= 1, `sent ${state.frames.length} while backed up`);
    state.buffered = 0;
    await done;
    session.close();
    assert.deepEqual(state.finished, [{ interrupted: false, dropped: 0 }]);
    assert.equal(state.frames.length, 120);
  });

  test('a stop is not held up by a client that stopped reading', async () => {
    const { state, out, finished } = fakeOutput();
    const session = new ReplaySession(source(), out);
    const done = finished();
    state.buffered = SEND_BUFFER_HIGH + 1;
    await session.play({ rate: 0, beginMs: 0, times: 1, paused: false });
    await new Promise((r) => setTimeout(r, 30));
    const t0 = performance.now();
    await session.stop();
    await done;
    assert.ok(performance.now() - t0 < 500, 'stopped promptly');
    assert.deepEqual(state.finished, [{ interrupted: true, dropped: 0 }]);
    assert.equal(state.frames.length, 0);
    session.close();
  });

  test('a rate change before the first frame skips nothing; after frames it re-sends nothing', async () => {
    const { state, out, finished } = fakeOutput();
    const session = new ReplaySession(source(), out);
    const done = finished();
    await session.play({ rate: 1, beginMs: 1, endMs: 100, times: 1, paused: true });
    await session.setRate(0);
    await session.step();
    for (const deadline = Date.now() + 3000; state.frames.length < 1 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(state.frames, [1000], 'the frame at exactly begin (1 ms) is played');
    await session.setRate(0);
    await session.resume();
    await done;
    assert.deepEqual(
      state.frames,
      Array.from({ length: 10 }, (_, i) => 1000 + i * 10_000),
    );
    session.close();
  });

  test('times > 1 loops, times ≤ 0 loops until stopped', async () => {
    const { state, out, finished } = fakeOutput();
    const session = new ReplaySession(source(), out);
    let done = finished();
    session.play({ rate: 0, beginMs: 0, endMs: 100, times: 3, paused: false });
    await done;
    assert.equal(state.frames.length, 3 * 10);
    done = finished();
    session.play({ rate: 0, beginMs: 0, endMs: 100, times: 0, paused: false });
    for (const deadline = Date.now() + 5000; state.frames.length <= 60 && Date.now() < deadline; )
      await new Promise((r) => setTimeout(r, 5));
    session.stop();
    await done;
    assert.ok(state.frames.length > 60, 'keeps looping past the third pass');
    assert.deepEqual(state.finished.at(-1), { interrupted: true, dropped: 0 });
    // An empty window ends at once instead of looping forever on nothing.
    done = finished();
    const before = state.frames.length;
    session.play({ rate: 1, beginMs: 50_000, times: 0, paused: false });
    await done;
    assert.equal(state.frames.length, before);
    assert.deepEqual(state.finished.at(-1), { interrupted: false, dropped: 0 });
    session.close();
  });
});
