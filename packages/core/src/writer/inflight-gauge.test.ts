import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { InflightGauge, lastRate, rememberRate } from './inflight-gauge.js';

const MAX_FRAMES = 20_000;
const QUEUE_MS = 250;
const gauge = (startRatePerMs = 0) => new InflightGauge(undefined, MAX_FRAMES, 1 << 30, QUEUE_MS, startRatePerMs);

describe('InflightGauge: the queue sized in time', () => {
  test('before any measurement the depth is sized for a fast writer (2,000 frames/ms), bounded by maxMemorySize', () => {
    assert.equal(gauge().depth, 2000 * QUEUE_MS);
    assert.equal(gauge().measuredRatePerMs, 0, 'an assumption, not a measurement (not remembered)');
    // maxQueueTimeMs 0 keeps VLink's plain frame limit, measured or not.
    assert.equal(new InflightGauge(undefined, MAX_FRAMES, 1 << 30, 0).depth, MAX_FRAMES);
    // The bytes stay bounded by maxMemorySize whatever the depth.
    const small = new InflightGauge(undefined, MAX_FRAMES, 1000, QUEUE_MS);
    const near = (size: number) => small.roomFrames <= 0 || size > small.roomBytes;
    assert.equal(near(0), false);
    small.pushed(1, 990);
    assert.equal(near(64), true);
  });

  test('acks too short to time alone are summed until they hold 1 ms of work', () => {
    const g = gauge();
    // A fast worker: 2,500 frames per ack in 0.5 ms (5,000 frames/ms).
    g.measure(2500, 0.5);
    g.measure(2500, 0.5);
    assert.equal(g.depth, 2000 * QUEUE_MS, 'not measured yet: 1 ms of work, not more');
    assert.equal(g.measuredRatePerMs, 0);
    g.measure(2500, 0.5);
    // 7,500 frames in 1.5 ms, smoothed from the assumed 2,000 frames/ms.
    assert.equal(g.measuredRatePerMs, 2000 * 0.8 + 5000 * 0.2);
    assert.equal(g.depth, (2000 * 0.8 + 5000 * 0.2) * QUEUE_MS);
  });

  test('measurements are smoothed, a cold first one too; the depth never falls below maxTaskDepth', () => {
    const g = gauge();
    g.measure(10_000, 2);
    g.measure(1000, 2);
    assert.equal(g.measuredRatePerMs, (2000 * 0.8 + 5000 * 0.2) * 0.8 + 500 * 0.2);
    // A slow writer (2 frames/ms): the queue shrinks toward maxTaskDepth over its first measurements, not at once.
    const slow = gauge();
    slow.measure(10, 5);
    assert.equal(slow.measuredRatePerMs, 2000 * 0.8 + 2 * 0.2);
    for (let i = 0; i < 40; i++) slow.measure(10, 5);
    assert.equal(slow.depth, MAX_FRAMES);
    // Nothing to learn from an empty ack or a negative time.
    const before = slow.measuredRatePerMs;
    slow.measure(0, 5);
    slow.measure(10, -1);
    assert.equal(slow.measuredRatePerMs, before);
  });

  test("write()'s mark: 25 ms of the worker's rate, between half of maxTaskDepth and half of the depth", () => {
    // 4,000 frames/ms: the depth holds 250 ms of it, the mark 25 ms.
    const g = gauge(4000);
    assert.equal(g.markDepth, 4000 * 25);
    assert.equal(g.markFrames, 4000 * 25);
    g.pushed(30_000, 30_000 * 64);
    assert.equal(g.markFrames, 4000 * 25 - 30_000, 'what a batch may still take before the mark');
    assert.equal(g.markBytes, (1 << 30) / 2 - 30_000 * 64, 'half of maxMemorySize in bytes');
    // A slow writer (100 frames/ms: 2,500 frames in 25 ms) still gets half of maxTaskDepth.
    assert.equal(gauge(100).markDepth, MAX_FRAMES / 2);
    // A queue sized in frames only (maxQueueTimeMs 0), or in less time than the mark: half of it.
    assert.equal(new InflightGauge(undefined, MAX_FRAMES, 1 << 30, 0, 4000).markDepth, MAX_FRAMES / 2);
    assert.equal(new InflightGauge(undefined, MAX_FRAMES, 1 << 30, 20, 4000).markDepth, 4000 * 10);
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
