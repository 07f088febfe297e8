import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { InflightGauge, lastRate, rememberRate } from './inflight-gauge.js';

const MAX_FRAMES = 20_000;
const QUEUE_MS = 250;
const gauge = (startRatePerMs = 0) => new InflightGauge(undefined, MAX_FRAMES, 1 << 30, QUEUE_MS, startRatePerMs);

describe('InflightGauge: the queue sized in time', () => {
  test('before any measurement the depth is maxTaskDepth', () => {
    assert.equal(gauge().depth, MAX_FRAMES);
    assert.equal(gauge().measuredRatePerMs, 0);
  });

  test('acks too short to time alone are summed until they hold 1 ms of work', () => {
    const g = gauge();
    // A fast worker: 2,500 frames per ack in 0.5 ms (5,000 frames/ms).
    g.measure(2500, 0.5);
    g.measure(2500, 0.5);
    assert.equal(g.depth, MAX_FRAMES, 'not measured yet: 1 ms of work, not more');
    g.measure(2500, 0.5);
    assert.equal(g.measuredRatePerMs, 5000);
    assert.equal(g.depth, 5000 * QUEUE_MS);
  });

  test('later measurements are smoothed; the depth never falls below maxTaskDepth', () => {
    const g = gauge();
    g.measure(10_000, 2);
    g.measure(1000, 2);
    assert.equal(g.measuredRatePerMs, 5000 * 0.8 + 500 * 0.2);
    const slow = gauge();
    slow.measure(10, 5);
    assert.equal(slow.depth, MAX_FRAMES);
    // Nothing to learn from an empty ack or a negative time.
    slow.measure(0, 5);
    slow.measure(10, -1);
    assert.equal(slow.measuredRatePerMs, 2);
  });

  test('a recording starts from the rate the last one of its backend measured', () => {
    const g = gauge(4000);
    assert.equal(g.depth, 4000 * QUEUE_MS);
    assert.equal(lastRate('gauge-test-backend'), 0);
    rememberRate('gauge-test-backend', 0);
    assert.equal(lastRate('gauge-test-backend'), 0, 'an unmeasured recording leaves nothing behind');
    rememberRate('gauge-test-backend', 3000);
    assert.equal(lastRate('gauge-test-backend'), 3000);
    assert.equal(lastRate('another-backend'), 0);
  });
});
