import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { PassClock } from './pass-clock.js';

describe('PassClock', () => {
  test('due times scale by rate and start at the pass begin', () => {
    const clock = new PassClock(1_000_000, 2, 100);
    assert.equal(clock.dueMs(1_000_000), 0);
    assert.equal(clock.dueMs(1_500_000), 250);
    assert.equal(clock.deadline(1_500_000), 350);
    assert.equal(clock.elapsed(150), 50);
  });

  test('a pause freezes play time, so the remaining wait survives it', () => {
    const clock = new PassClock(0, 1, 0);
    clock.freeze(40);
    assert.equal(clock.elapsed(90), 40, 'frozen while paused');
    clock.freeze(60); // a second pause keeps the first instant
    clock.unfreeze(140);
    assert.equal(clock.elapsed(140), 40);
    // A frame due at 100 ms of play time had 60 ms left at the pause; it is still 60 ms away after resume.
    assert.equal(clock.deadline(100_000), 200);
  });

  test('a step counts the stepped frame as on time', () => {
    const clock = new PassClock(0, 1, 0);
    clock.freeze(10);
    clock.advanceTo(clock.dueMs(300_000), 50);
    assert.equal(clock.elapsed(999), 300);
    clock.unfreeze(1000);
    assert.equal(clock.deadline(400_000), 1100, 'the next frame keeps its 100 ms spacing');
    clock.advanceTo(clock.dueMs(100_000), 1000);
    assert.equal(clock.elapsed(1000), 300, 'a late frame does not move the clock back');
  });
});
