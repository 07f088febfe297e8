import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType } from '../model/action-type.js';
import { TempBags, rawFrame } from '../playback/test-bags.test.helper.js';
import { BagReader } from '../reader/bag-reader.js';
import { BagWriter } from '../writer/bag-writer.js';
import { analyzeTiming, urlTiming } from './timing.js';

const bags = new TempBags();
after(() => bags.remove());

/** Timestamps every `periodUs` over [0, spanUs], minus the ones inside (holeFrom, holeTo). */
const stream = (url: string, periodUs: number, spanUs: number, hole?: [number, number]) =>
  Array.from({ length: spanUs / periodUs + 1 }, (_, i) => i * periodUs)
    .filter((t) => !hole || t <= hole[0] || t >= hole[1])
    .map((t) => [t, url] as const);

describe('analyzeTiming', () => {
  test('finds a 0.1 s hole, and reports rate and intervals per url', async () => {
    // 100 Hz with 0.1 s missing after 0.5 s (an interval of 110 ms), and a 10 Hz stream missing the 1.0 s message
    // (a 0.1 s hole: one 200 ms interval).
    const rows = [
      ...stream('fast', 10_000, 1_000_000, [500_000, 610_000]),
      ...stream('slow', 100_000, 2_000_000, [900_000, 1_100_000]),
    ];
    const reader = await BagReader.create(await bags.write(rows.sort((a, b) => a[0] - b[0])));
    const [fast, slow] = await analyzeTiming(reader);
    assert.deepEqual(fast, {
      url: 'fast',
      action: 'Pub',
      count: 101 - 10,
      rateHz: 90,
      intervalUs: { min: 10_000, p50: 10_000, p99: 110_000, max: 110_000 }, // 90 intervals: p99 is the largest
      gaps: [{ startUs: 500_000, lengthUs: 110_000 }],
    });
    // At 10 Hz the same 0.1 s hole is two periods long: the default factor (1.5) finds it, a factor of 3 does not.
    assert.deepEqual(slow!.gaps, [{ startUs: 900_000, lengthUs: 200_000 }]);
    assert.equal(slow!.count, 20);
    assert.equal(slow!.rateHz, 19 / 2);
    const [loose] = await analyzeTiming(reader, { factor: 3, filterUrls: ['slow'] });
    assert.deepEqual(loose!.gaps, []);
    reader.close();
  });

  test('0, 1 and 2 messages', async () => {
    const reader = await BagReader.create(
      await bags.write(
        [
          [5_000, 'one'],
          [1_000, 'two'],
          [251_000, 'two'],
        ].sort((a, b) => (a[0] as number) - (b[0] as number)) as Array<[number, string]>,
      ),
    );
    const report = await analyzeTiming(reader, { filterUrls: ['none', 'one', 'two'] });
    assert.deepEqual(report, [
      { url: 'none', action: null, count: 0, rateHz: 0, intervalUs: null, gaps: [] },
      { url: 'one', action: 'Pub', count: 1, rateHz: 0, intervalUs: null, gaps: [] },
      {
        url: 'two',
        action: 'Pub',
        count: 2,
        rateHz: 4,
        intervalUs: { min: 250_000, p50: 250_000, p99: 250_000, max: 250_000 },
        gaps: [],
      },
    ]);
    reader.close();
  });

  test("an RPC url's requests and responses are separate streams: 10 Hz request/response has no gaps", async () => {
    // 10 Hz requests for 2 s, each answered 3 ms later: over both actions as one stream the intervals alternate
    // 3 ms / 97 ms, the median is 3 ms and every 97 ms interval would be a "gap".
    const path = bags.path('rpc');
    const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: 1_700_000_000_000 });
    for (let i = 0; i <= 20; i++) {
      writer.push({ ...rawFrame(i * 100_000, '/svc', i), actionType: ActionType.ClientRequest });
      // The request at 1.0 s is never answered: a real gap, in the responses only.
      if (i !== 10) writer.push({ ...rawFrame(i * 100_000 + 3_000, '/svc', i), actionType: ActionType.ClientResponse });
    }
    await writer.close();
    const reader = await BagReader.create(path);
    const report = await analyzeTiming(reader);
    reader.close();
    assert.deepEqual(
      report.map((t) => [t.url, t.action, t.count, t.rateHz, t.intervalUs?.p50, t.gaps]),
      [
        ['/svc', 'C/Req', 21, 10, 100_000, []],
        ['/svc', 'C/Resp', 20, 19 / 2, 100_000, [{ startUs: 903_000, lengthUs: 200_000 }]],
      ],
    );
    // The same frames as one stream (what the analysis did before): 20 false gaps.
    const mixed = urlTiming('/svc', [
      ...Array.from({ length: 21 }, (_, i) => i * 100_000),
      ...Array.from({ length: 21 }, (_, i) => i * 100_000 + 3_000),
    ]);
    assert.equal(mixed.gaps.length, 20);
  });

  test('jitter is not a gap; percentiles are nearest-rank; bursts at one instant do not hide gaps', async () => {
    // 50 Hz with a deterministic ±30 % jitter.
    const jittered = Array.from({ length: 200 }, (_, i) => i * 20_000 + (((i * 7919) % 13) - 6) * 1_000);
    const timing = urlTiming('jitter', jittered);
    assert.deepEqual(timing.gaps, []);
    assert.equal(timing.count, 200);
    assert.ok(Math.abs(timing.rateHz - 50) < 0.5, `rate ${timing.rateHz}`);
    assert.deepEqual(urlTiming('x', [0, 10, 30, 60, 100, 1100]).intervalUs, { min: 10, p50: 30, p99: 1000, max: 1000 });
    assert.deepEqual(urlTiming('x', [0, 10, 30, 60, 100, 1100]).gaps, [{ startUs: 100, lengthUs: 1000 }]);
    // Three frames per 100 ms burst: most intervals are 0, the period is 100 ms, a 400 ms silence is a gap.
    const bursts = [0, 0, 0, 100, 100, 100, 200, 200, 200, 600, 600, 600].map((ms) => ms * 1000);
    assert.deepEqual(urlTiming('burst', bursts).gaps, [{ startUs: 200_000, lengthUs: 400_000 }]);
    assert.deepEqual(urlTiming('same', [7, 7, 7]).gaps, []);
    await assert.rejects(analyzeTiming({ frames: async function* () {} }, { factor: 0 }), { code: 'INVALID_ARGUMENT' });
  });
});
