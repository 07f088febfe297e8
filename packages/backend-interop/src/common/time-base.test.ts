import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { TimeBase } from './time-base.js';

/** floor((ns − startMs · 10^6) / 1000) in bigint: what every conversion must give, however far from the start. */
function exactUs(ns: bigint, startMs: number): number {
  const rel = ns - BigInt(startMs) * 1_000_000n;
  const q = rel / 1000n;
  return Number(rel < 0n && q * 1000n !== rel ? q - 1n : q);
}

describe('TimeBase', () => {
  // rosbag2's test bags: a recording of 2018 whose header stamps are 0 (an unset header), and ns of 2^53 and more.
  const base = new TimeBase(1_544_000_766_974);
  const times = [0n, 1n, 999n, 1_000_000_001n, 1_544_000_766_974_000_001n, 1_544_000_766_973_999_999n, 2n ** 63n - 1n];

  test('ns since the epoch → µs since the start, exact at any distance from the start', () => {
    for (const ns of times) assert.equal(base.usFromNs(ns), exactUs(ns, base.startMs), String(ns));
  });

  test('MCAP halves and ROS sec/nsec give the same exact µs', () => {
    for (const ns of times) {
      assert.equal(base.usFromHalves(Number(ns >> 32n), Number(ns & 0xffff_ffffn)), exactUs(ns, base.startMs));
      if (ns < 2n ** 32n * 1_000_000_000n) {
        const sec = Number(ns / 1_000_000_000n);
        assert.equal(base.usFromSecNsec(sec, Number(ns % 1_000_000_000n)), exactUs(ns, base.startMs), String(ns));
      }
    }
  });
});
