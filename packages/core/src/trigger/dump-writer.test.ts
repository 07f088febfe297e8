import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { TempBags } from '../playback/test-bags.test.helper.js';
import { BagReader } from '../reader/bag-reader.js';
import { faultBackend } from '../writer/fault-backends.test.helper.js';
import type { TriggerConfig } from './trigger-config.js';
import { TriggerRecorder } from './trigger-recorder.js';
import type { TriggerHooks } from './trigger-types.js';

const bags = new TempBags();
registerBackend(faultBackend);
after(() => bags.remove());
let dirs = 0;

const frame = (url: string, timestamp: number, publishTime?: number): Frame => ({
  timestamp,
  url,
  data: new Uint8Array([timestamp & 0xff]),
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
  ...(publishTime === undefined ? {} : { publishTime }),
});

/** A recorder on a hand-moved clock with no post window, so `trigger()` writes at once. */
function recorder(config: Partial<TriggerConfig>, hooks: TriggerHooks) {
  const clock = { nowUs: 1_000_000 };
  const dumpDir = join(bags.dir, `dump-failure-${dirs++}`);
  const rec = new TriggerRecorder(
    { dumpDir, fileType: 'memjson', defaultPreMs: 10_000, defaultPostMs: 0, retentionGuardMs: 0, ...config },
    { clock: () => clock.nowUs, wallClock: () => 1_700_000_000_000 + Math.floor(clock.nowUs / 1000), hooks },
  );
  rec.start();
  return { rec, clock, dumpDir };
}

describe('a trigger dump that fails part-way', () => {
  test('a throwing onFrame hook: the dump is deleted, and the hook’s error is the reported cause', async () => {
    const failed: BagError[] = [];
    let seen = 0;
    const boom = new Error('hook boom');
    const { rec, clock, dumpDir } = recorder(
      {},
      {
        onFrame: () => {
          if (++seen === 5) throw boom;
        },
        onDumpFailed: (error) => failed.push(error),
      },
    );
    for (let i = 0; i < 50; i++) rec.ingest(frame(i % 2 ? '/a' : '/b', (clock.nowUs += 1000)));
    const error = await rec.trigger({ reason: 'hard-brake', nameHint: 'event' }).then(
      () => assert.fail('the dump must fail'),
      (caught: unknown) => caught as BagError,
    );
    assert.ok(BagError.isInstance(error));
    assert.equal(error.code, 'ABORTED', 'not IO_ERROR: nothing went wrong with the file');
    assert.match(error.message, /onFrame hook threw; dump abandoned: hook boom/);
    assert.equal(error.cause, boom);
    assert.deepEqual(failed, [error]);
    assert.deepEqual(readdirSync(dumpDir), [], 'no partial dump (nor its sidecar) is left to pass for an event record');
    assert.deepEqual(rec.stats().dumps, { finished: 0, failed: 1, rejected: 0 });
    // The next dump is written whole.
    seen = -1_000;
    const next = await rec.trigger({ reason: 'again', nameHint: 'event' });
    assert.equal(next.frames, 50);
    assert.ok(existsSync(next.file));
    await rec.quit();
  });

  test('a hook that throws a BagError keeps its code and message', async () => {
    const own = new BagError('LIMIT_REACHED', 'uploader is full');
    const { rec, clock, dumpDir } = recorder(
      {},
      {
        onDumpStarted: () => {
          throw own;
        },
      },
    );
    rec.ingest(frame('/a', (clock.nowUs += 1000)));
    await assert.rejects(rec.trigger({ nameHint: 'x' }), (error) => error === own);
    assert.deepEqual(readdirSync(dumpDir), []);
    await rec.quit();
  });

  test('a storage error mid-dump: the partial dump is deleted and the storage error reported', async () => {
    const { rec, clock, dumpDir } = recorder({ fileType: 'faultjson' }, {});
    for (let i = 0; i < 20; i++) rec.ingest(frame(i === 10 ? 'fail/storage' : '/a', (clock.nowUs += 1000)));
    await assert.rejects(
      rec.trigger({ nameHint: 'disk' }),
      (error: BagError) => error.code === 'IO_ERROR' && /disk on fire/.test(error.message),
    );
    assert.deepEqual(readdirSync(dumpDir), []);
    await rec.quit();
  });
});

test('a dump moves the publish time with the log time: the publish-to-log latency is kept', async () => {
  const { rec, clock } = recorder({}, {});
  clock.nowUs = 5_100_000;
  for (let i = 0; i < 4; i++) {
    clock.nowUs += 100_000;
    // Captured now, sampled 3 ms earlier (both on the recorder clock); the last one stamped on arrival.
    rec.ingest(frame('/a', i < 3 ? clock.nowUs : -1, clock.nowUs - 3_000));
  }
  rec.ingest(frame('/b', (clock.nowUs += 1_000)));
  const dump = await rec.trigger({ nameHint: 'latency', preMs: 1_000 });
  const reader = await BagReader.create(dump.file);
  const times: Array<[string, number, number | undefined]> = [];
  for await (const f of reader.frames()) times.push([f.url, f.timestamp, f.publishTime]);
  reader.close();
  assert.deepEqual(times, [
    ['/a', 0, -3_000],
    ['/a', 100_000, 97_000],
    ['/a', 200_000, 197_000],
    ['/a', 300_000, 297_000],
    ['/b', 301_000, 301_000],
  ]);
  await rec.quit();
});
