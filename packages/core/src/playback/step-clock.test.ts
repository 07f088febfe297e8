import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader } from '../reader/bag-reader.js';
import { recordEvents, TempBags, until } from './test-bags.test.helper.js';

const bags = new TempBags();
after(() => bags.remove());

describe('Player: a step moves the pass clock (format reference §7.3)', () => {
  // Kills the mutant that drops `clock.advanceTo(...)` after a step in session-loop.ts: without it, play time stays
  // where the pause froze it, so the frame after a stepped one waits its whole offset from the pass begin again.
  test('after stepping to a frame 2 s in, the next frame (100 ms later) follows 100 ms after resume, not 2.1 s', async () => {
    const reader = await BagReader.create(
      await bags.write([
        [0, 'a'],
        [2_000_000, 'b'],
        [2_100_000, 'c'],
      ]),
    );
    const { events } = recordEvents(reader);
    // Replaces recordEvents' output callback: `order` keeps what it would have recorded.
    const at = new Map<string, number>();
    const order: string[] = [];
    reader.registerOutputCallback((frame) => {
      at.set(frame.url, performance.now());
      order.push(`${frame.url}@${frame.timestamp / 1000}`);
    });
    const playback = reader.play({ autoPause: true });
    await until(() => events.includes('status:1'));
    assert.equal(reader.pauseToNext(), true);
    await until(() => at.has('a'));
    assert.equal(reader.pauseToNext(), true, 'steps to b, 2 s ahead of the paused clock');
    await until(() => at.has('b'));
    assert.equal(reader.getRealTimestamp(), 2000);
    const resumedAt = performance.now();
    reader.resume();
    assert.equal(await playback.finished, false);
    const wait = at.get('c')! - resumedAt;
    // On time is 100 ms; the mutant waits 2100 ms. The upper bound leaves room for a loaded machine.
    assert.ok(wait >= 95 && wait < 1500, `c came ${wait.toFixed(1)} ms after resume`);
    assert.deepEqual(order, ['a@0', 'b@2000', 'c@2100']);
    reader.close();
  });
});
