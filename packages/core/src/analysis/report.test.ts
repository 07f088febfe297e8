import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import type { Info } from '../model/info.js';
import { SchemaType } from '../model/schema-type.js';
import { histogram, percentiles } from './histogram.js';
import { analyzeReport } from './report.js';
import type { SummarySource } from './summary.js';

// The validation report from frames held in memory: streams per url and action, histograms, time semantics, groups.

function source(frames: Frame[], counters: Info['counters'] = {}): SummarySource {
  const info = { path: 'mem.vdb', format: 'vdb', messageCount: frames.length, counters } as unknown as Info;
  return {
    getInfo: () => info,
    async *frames() {
      yield* [...frames].sort((a, b) => a.timestamp - b.timestamp);
    },
  };
}

const frame = (url: string, timestamp: number, publishTime?: number, actionType = ActionType.Publish): Frame => ({
  timestamp,
  url,
  data: new Uint8Array(1),
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType,
  ...(publishTime === undefined ? {} : { publishTime }),
});

describe('histogram and percentiles', () => {
  test('bins hold [low, high) with the last one closed; outside values are under/over', () => {
    assert.deepEqual(histogram([0, 1, 2, 2.5, 3, 4, -1], 0, 3, 3), {
      edges: [0, 1, 2, 3],
      counts: [1, 1, 3],
      under: 1,
      over: 1,
    });
    assert.deepEqual(histogram([5, 5, 6], 5, 5, 10), { edges: [5, 5], counts: [2], under: 0, over: 1 });
    assert.deepEqual(percentiles([4, 1, 3, 2]), { min: 1, p50: 2, p99: 4, max: 4 });
    assert.equal(percentiles([]), null);
  });
});

describe('analyzeReport', () => {
  test('an RPC url: requests and responses are separate streams with their own regular intervals', async () => {
    const frames: Frame[] = [];
    for (let i = 0; i < 20; i++) {
      frames.push(frame('/rpc', i * 100_000, undefined, ActionType.ClientRequest));
      frames.push(frame('/rpc', i * 100_000 + 3_000 + (i % 2) * 1_000, undefined, ActionType.ClientResponse));
    }
    const report = await analyzeReport(source(frames, { '/rpc': { readTimeout: 2 } }), { bins: 4 });
    assert.deepEqual(
      report.streams.map((s) => [s.action, s.count, s.intervalUs?.min, s.intervalUs?.p50, s.time]),
      [
        ['C/Req', 20, 100_000, 100_000, 'log'],
        ['C/Resp', 20, 99_000, 101_000, 'log'],
      ],
    );
    assert.equal(report.streams[0]!.rateHz, 10);
    // Requests: 19 intervals of exactly the median, in the bin holding 1 × median (0 … 3 × median in 4 bins).
    assert.deepEqual(report.streams[0]!.intervalHistogram, {
      edges: [0, 75_000, 150_000, 225_000, 300_000],
      counts: [0, 19, 0, 0],
      under: 0,
      over: 0,
    });
    assert.deepEqual(report.counters, { '/rpc': { readTimeout: 2 } });
    assert.deepEqual(report.groups, []);
  });

  test('time semantics and latency; a long silence counts as over', async () => {
    const frames = [
      frame('/a', 0, 0),
      frame('/a', 10_000, 9_000),
      frame('/a', 20_000),
      frame('/a', 100_000, 99_500),
      frame('/b', 0, -500),
      frame('/b', 10_000, 9_000),
    ];
    const report = await analyzeReport(source(frames), { bins: 3 });
    const [a, b] = report.streams;
    assert.equal(a!.time, 'mixed');
    assert.deepEqual(a!.latencyUs, { min: 0, p50: 0, p99: 1_000, max: 1_000 });
    assert.deepEqual(a!.intervalHistogram, {
      edges: [0, 10_000, 20_000, 30_000],
      counts: [0, 2, 0],
      under: 0,
      over: 1,
    });
    assert.equal(b!.time, 'publish');
    assert.deepEqual(b!.latencyUs, { min: 500, p50: 500, p99: 1_000, max: 1_000 });
  });

  test('groups: given ones with the first url as reference; found ones by shared publish times', async () => {
    const frames: Frame[] = [];
    for (let i = 0; i < 10; i++) {
      const t = i * 33_000;
      frames.push(frame('/left', t + 1_000, t));
      frames.push(frame('/right', t + 1_200, i === 4 ? t + 400 : i === 7 ? t - 20_000 : t));
      frames.push(frame('/left/meta', t + 1_000, t));
      frames.push(frame('/imu', i * 10_000 + 7, i * 10_000 + 7));
    }
    const found = await analyzeReport(source(frames), { bins: 2 });
    assert.equal(found.groups.length, 1, 'the meta url and the imu are not grouped');
    const [group] = found.groups;
    assert.deepEqual([group!.source, group!.reference, group!.toleranceUs], ['shared', '/left', 16_500]);
    assert.equal(group!.members.length, 1);
    const right = group!.members[0]!;
    // Frame 4 of /right is 0.4 ms late; frame 7 is 20 ms early: nearer to /left's frame 6 (13 ms after it).
    assert.deepEqual(right, {
      url: '/right',
      matched: 10,
      unmatched: 0,
      exact: 8,
      offsetUs: { min: 0, p50: 0, p99: 13_000, max: 13_000 },
      offsetHistogram: { edges: [-16_500, 0, 16_500], counts: [0, 10], under: 0, over: 0 },
    });
    // A tighter tolerance leaves frame 7 unmatched.
    const tight = await analyzeReport(source(frames), { toleranceUs: 1_000, bins: 2 });
    assert.deepEqual([tight.groups[0]!.members[0]!.matched, tight.groups[0]!.members[0]!.unmatched], [9, 1]);
    const given = await analyzeReport(source(frames), { groups: [['/imu', '/left']], toleranceUs: 2_000 });
    assert.equal(given.groups[0]!.source, 'given');
    assert.equal(given.groups[0]!.reference, '/imu');
    await assert.rejects(analyzeReport(source(frames), { groups: [['/nope', '/left']] }), { code: 'INVALID_ARGUMENT' });
    await assert.rejects(analyzeReport(source(frames), { bins: 0 }), { code: 'INVALID_ARGUMENT' });
  });
});
