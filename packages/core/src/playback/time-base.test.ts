import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { companionMetaFrame, parseCompanionMeta } from '../model/companion-meta.js';
import { ActionType } from '../model/action-type.js';
import { BagReader } from '../reader/bag-reader.js';
import { BagWriter } from '../writer/bag-writer.js';
import { rawFrame, TempBags } from './test-bags.test.helper.js';

// Playback and windows by publish time (format reference §1.3), companion metadata and writer.count's checks.

const bags = new TempBags();
after(() => bags.remove());

/** Log times 0, 10, 300 ms; publish times 0, 250, 260 ms. */
async function bag(): Promise<string> {
  const path = bags.path('publish');
  const writer = await BagWriter.create(path, { syncMode: true, startTimestamp: 1_700_000_000_000 });
  for (const [log, publish, url] of [
    [0, 0, 'a'],
    [10_000, 250_000, 'b'],
    [300_000, 260_000, 'a'],
  ] as const)
    writer.push({ ...rawFrame(log, url, log / 1000), publishTime: publish });
  await writer.close();
  return path;
}

async function played(path: string, config: Parameters<BagReader['play']>[0]): Promise<Array<[string, number]>> {
  const reader = await BagReader.create(path);
  const out: Array<[string, number]> = [];
  const start = performance.now();
  reader.registerOutputCallback((f) => void out.push([`${f.url}@${f.timestamp / 1000}`, performance.now() - start]));
  await reader.play(config).finished;
  reader.close();
  return out;
}

describe("timeBase: 'publish'", () => {
  test('the window applies to publish times; frames keep the file order', async () => {
    const path = await bag();
    const byPublish = await played(path, { forceDelay: 0, beginTime: 200, timeBase: 'publish' });
    assert.deepEqual(
      byPublish.map(([name]) => name),
      ['b@10', 'a@300'],
    );
    const byLog = await played(path, { forceDelay: 0, beginTime: 200 });
    assert.deepEqual(
      byLog.map(([name]) => name),
      ['a@300'],
    );
    await assert.rejects(played(path, { timeBase: 'sample' as 'log' }), { code: 'INVALID_ARGUMENT' });
  });

  test('pacing follows publish times: the second frame waits for its publish time, not its log time', async () => {
    const path = await bag();
    const [, second, third] = await played(path, { timeBase: 'publish', rate: 1 });
    assert.ok(second![1] >= 200, `second frame after ${second![1]} ms (publish time 250 ms)`);
    // The third frame's publish time (260 ms) is 10 ms after the second's, though its log time is 290 ms later.
    assert.ok(third![1] - second![1] < 200, `third frame ${third![1] - second![1]} ms after the second`);
    const [, early] = await played(path, { rate: 1 });
    assert.ok(early![1] < 200, `by log time the second frame goes out at ${early![1]} ms`);
  });
});

describe('companion metadata and writer.count', () => {
  test('companionMetaFrame: <url>/meta, JSON object, the frame times; bad input is refused', () => {
    const meta = companionMetaFrame(
      { url: '/cam', timestamp: 5_000, publishTime: 4_200, actionType: ActionType.Publish },
      { deviceTime: 42, deviceTimeUnit: 'ns', clockDomain: 'cam0' },
    );
    assert.deepEqual(
      [meta.url, meta.timestamp, meta.publishTime, meta.serType, parseCompanionMeta(meta)],
      ['/cam/meta', 5_000, 4_200, 'json', { deviceTime: 42, deviceTimeUnit: 'ns', clockDomain: 'cam0' }],
    );
    assert.throws(() => companionMetaFrame({ url: '/cam', timestamp: -1, actionType: 5 }, {}), {
      code: 'INVALID_ARGUMENT',
    });
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    assert.throws(() => companionMetaFrame({ url: '/cam', timestamp: 1, actionType: 5 }, cyclic), {
      code: 'INVALID_ARGUMENT',
    });
    assert.throws(() => parseCompanionMeta({ url: '/cam/meta', data: new TextEncoder().encode('[1]') }), {
      code: 'CORRUPT_DATA',
    });
  });

  test('count() checks its arguments and refuses after close; counts read back', async () => {
    const path = bags.path('count');
    const writer = await BagWriter.create(path, { syncMode: true });
    writer.push(rawFrame(0, '/a', 0));
    assert.throws(() => writer.count('', 'x'), { code: 'INVALID_ARGUMENT' });
    assert.throws(() => writer.count('/a', ''), { code: 'INVALID_ARGUMENT' });
    assert.throws(() => writer.count('/a', 'x', 0), { code: 'INVALID_ARGUMENT' });
    assert.throws(() => writer.count('/a', 'x', 1.5), { code: 'INVALID_ARGUMENT' });
    writer.count('/a', 'staleSnapshot', 4);
    writer.count('/a', 'staleSnapshot');
    assert.deepEqual(writer.stats().droppedByUrl, { '/a': { staleSnapshot: 5 } });
    await writer.close();
    assert.throws(() => writer.count('/a', 'x'), { code: 'CLOSED' });
  });
});
