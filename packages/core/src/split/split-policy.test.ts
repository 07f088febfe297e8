import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { formatFileTime } from '../model/time-format.js';
import { SegmentLedger, urlFrequency, type SegmentStats } from './segment-ledger.js';
import { SegmentNamer } from './segment-naming.js';
import { startSegment } from './segment-sequence.js';
import { isBareFileName, splitPath, stemOf } from './split-files.js';
import { manifestSplitBySize, shouldSplit } from './split-policy.js';

describe('split decision', () => {
  test('size: current + payload > splitBySize', () => {
    const rule = { splitBySize: 100, splitByTime: 0, beginTime: 0 };
    assert.equal(shouldSplit(rule, 0, 60, 0, 40), false);
    assert.equal(shouldSplit(rule, 0, 60, 0, 41), true);
    assert.equal(shouldSplit({ ...rule, splitBySize: 0 }, 0, 1e12, 0, 1), false);
    assert.equal(manifestSplitBySize(rule), 100);
  });

  test('time has priority; fixed boundaries from beginTime; index counts splits', () => {
    const rule = { splitBySize: 1, splitByTime: 1000, beginTime: 500 };
    assert.equal(manifestSplitBySize(rule), 0);
    assert.equal(shouldSplit(rule, 0, 1e9, 1_500_000, 1e9), false); // 1.5 s − 0.5 s = 1 s, not > 1 s
    assert.equal(shouldSplit(rule, 0, 0, 1_500_001, 0), true);
    assert.equal(shouldSplit(rule, 1, 0, 2_500_000, 0), false);
    assert.equal(shouldSplit(rule, 1, 0, 9_000_000, 0), true); // skipped intervals: still one split per message
  });
});

describe('segment naming', () => {
  test('<stem>.<n><ext>', () => {
    const namer = new SegmentNamer({ stem: 'drive', extension: '.vdb', byTime: false });
    assert.deepEqual(
      [0, 1, 2].map((i) => namer.name(i, 0)),
      ['drive.1.vdb', 'drive.2.vdb', 'drive.3.vdb'],
    );
  });

  test('by time; the same millisecond or a used name gets .<n>', () => {
    const namer = new SegmentNamer({ stem: 'x', extension: '.vcap', byTime: true });
    const t = new Date(2026, 2, 17, 10, 0, 0, 123).getTime();
    assert.equal(namer.name(0, t), '2026-03-17_10-00-00-123.vcap');
    assert.equal(namer.name(1, t + 0.4), '2026-03-17_10-00-00-123.2.vcap');
    assert.equal(namer.name(2, t + 5), '2026-03-17_10-00-00-128.vcap');
    assert.equal(namer.name(3, t), `${formatFileTime(t)}.4.vcap`);
  });

  test('paths: bare names, stems, directories', () => {
    assert.equal(stemOf('drive.vdbx'), 'drive');
    assert.equal(stemOf('a.b.vcapx'), 'a.b');
    assert.deepEqual(splitPath('/tmp/x/drive.vdbx'), { dir: '/tmp/x/', name: 'drive.vdbx' });
    assert.deepEqual(splitPath('drive.vdbx'), { dir: '', name: 'drive.vdbx' });
    assert.deepEqual(splitPath('C:\\rec\\d.vdbx'), { dir: 'C:\\rec\\', name: 'd.vdbx' });
    assert.equal(isBareFileName('drive.1.vdb'), true);
    assert.equal(isBareFileName('..'), false);
    assert.equal(isBareFileName('a/b'), false);
  });
});

describe('segment ledger (maxSplitCount)', () => {
  const stats = (rows: number, maxTs: number, urls: Array<[number, number, number, number, number]>): SegmentStats => ({
    rows,
    maxTs,
    urls: new Map(urls.map(([i, count, size, firstTs, lastTs]) => [i, { count, size, firstTs, lastTs }])),
  });

  test('unlimited: totals over every segment plus the open one', () => {
    const ledger = new SegmentLedger(0);
    assert.deepEqual(ledger.open('a', '/d/a'), []);
    ledger.close(stats(2, 20, [[0, 2, 10, 10, 20]]));
    ledger.open('b', '/d/b');
    assert.deepEqual(ledger.closedNames(), ['a']);
    const totals = ledger.totals(
      stats(3, 50, [
        [0, 1, 5, 30, 30],
        [1, 2, 4, -1, -1],
      ]),
    );
    assert.equal(totals.rows, 5);
    assert.equal(totals.maxTs, 50);
    assert.deepEqual(totals.urls.get(0), { count: 3, size: 15, firstTs: 10, lastTs: 30 });
    assert.deepEqual(totals.urls.get(1), { count: 2, size: 4, firstTs: -1, lastTs: -1 });
    assert.equal(urlFrequency(totals.urls.get(0)!), 3 / (20 / 1e6));
    assert.equal(urlFrequency(totals.urls.get(1)!), 0);
  });

  test('limited: the oldest entries are dropped once more than N exist; the maximum time is remembered', () => {
    const ledger = new SegmentLedger(2);
    ledger.open('a', '/d/a');
    ledger.close(stats(1, 100, [[0, 1, 1, 100, 100]]));
    assert.deepEqual(ledger.open('b', '/d/b'), []);
    ledger.close(stats(1, 50, [[1, 1, 1, 50, 50]]));
    const dropped = ledger.open('c', '/d/c');
    assert.deepEqual(
      dropped.map((e) => e.name),
      ['a'],
    );
    assert.deepEqual(ledger.closedNames(), ['b']);
    const totals = ledger.totals(undefined);
    assert.equal(totals.rows, 1);
    assert.equal(totals.maxTs, 100);
    assert.equal(totals.urls.has(0), false);
  });
});

describe('start segment (format reference §7.3)', () => {
  test('first segment whose end reaches the begin time, after the previous end', () => {
    const ends = [100, 200, 300];
    assert.equal(startSegment(ends, undefined), 0);
    assert.equal(startSegment(ends, 0), 0);
    assert.equal(startSegment(ends, 50_000), 0);
    assert.equal(startSegment(ends, 100_000), 0);
    assert.equal(startSegment(ends, 100_999), 0); // whole ms, as VLink's integer begin_time
    assert.equal(startSegment(ends, 101_000), 1);
    assert.equal(startSegment(ends, 250_000), 2);
    assert.equal(startSegment(ends, 301_000), 3);
  });
});
