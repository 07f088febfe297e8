import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { BagReader } from '../reader/bag-reader.js';
import { PlayStatus } from './play-status.js';
import { recordEvents, sleep, TempBags, until } from './test-bags.test.helper.js';

const bags = new TempBags();
after(() => bags.remove());
const THREE: Array<[number, string]> = [
  [10_000, 'a'],
  [20_000, 'b'],
  [30_000, 'a'],
];
const PASS = ['ready', 'status:2', 'a@10', 'b@20', 'a@30', 'status:0'];
const TENTHS: Array<[number, string]> = Array.from({ length: 10 }, (_, i) => [i * 100_000, 'a'] as [number, string]);

async function open(rows: ReadonlyArray<readonly [number, string]> = THREE) {
  const reader = await BagReader.create(await bags.write(rows));
  return { reader, ...recordEvents(reader) };
}

describe('Player: sessions and callbacks (format reference §7.4)', () => {
  test('loops go Playing → Stopped → Playing; ready fires per pass; one finish at the end', async () => {
    const { reader, events } = await open();
    const playback = reader.play({ forceDelay: 0, times: 2 }); // before asyncRun: play starts the loop
    assert.equal(await playback.finished, false);
    assert.deepEqual(events, [...PASS, ...PASS, 'finish:false']);
    assert.equal(reader.getStatus(), PlayStatus.Stopped);
    assert.equal(reader.getTimestamp(), 0);
    reader.close();
  });

  test('the window: beginTime/endTime (inclusive, ms) and playback filterUrls', async () => {
    const { reader, events } = await open();
    await reader.play({ forceDelay: 0, beginTime: 15, endTime: 30 }).finished;
    await reader.play({ forceDelay: 0, filterUrls: ['a'] }).finished;
    await reader.play({ forceDelay: 0, beginTime: 31 }).finished;
    assert.deepEqual(events, [
      'ready',
      'status:2',
      'b@20',
      'a@30',
      'status:0',
      'finish:false',
      'ready',
      'status:2',
      'a@10',
      'a@30',
      'status:0',
      'finish:false',
      // No data: ready, then the session ends (status is already Stopped).
      'ready',
      'finish:false',
    ]);
    reader.close();
  });

  test('autoPause, then pauseToNext emits exactly one frame each time; resume plays on', async () => {
    const { reader, events } = await open();
    const playback = reader.play({ forceDelay: 0, autoPause: true });
    await until(() => events.length === 2);
    assert.deepEqual(events, ['ready', 'status:1']);
    assert.equal(reader.getRealTimestamp(), 0, 'before the first frame: the pass begin');
    assert.equal(reader.pauseToNext(), true);
    await until(() => events.length === 5);
    await sleep(20);
    assert.deepEqual(events.slice(2), ['status:2', 'a@10', 'status:1']);
    assert.equal(reader.getStatus(), PlayStatus.Paused);
    assert.equal(reader.getRealTimestamp(), 10);
    assert.equal(reader.getTimestamp(), 10);
    reader.pauseToNext();
    await until(() => events.length === 8);
    reader.pause(); // already paused: no status change
    reader.resume();
    reader.resume();
    assert.equal(await playback.finished, false);
    assert.deepEqual(events.slice(5), ['status:2', 'b@20', 'status:1', 'status:2', 'a@30', 'status:0', 'finish:false']);
    assert.equal(reader.pauseToNext(), false, 'only while paused');
    reader.close();
  });

  test('a pause during a wait keeps the remaining wait', async () => {
    const { reader, events } = await open([
      [0, 'a'],
      [200_000, 'a'],
    ]);
    const at: number[] = [];
    reader.registerOutputCallback(() => void at.push(performance.now()));
    const playback = reader.play();
    await until(() => at.length === 1);
    await sleep(50);
    reader.pause();
    await sleep(100);
    assert.equal(at.length, 1, 'nothing emitted while paused');
    reader.resume();
    await playback.finished;
    const gap = at[1]! - at[0]!;
    // 200 ms of schedule + 100 ms paused; generous upper bound for a loaded machine.
    assert.ok(gap >= 295 && gap < 1500, `second frame after ${gap.toFixed(1)} ms`);
    assert.deepEqual(events, ['ready', 'status:2', 'status:1', 'status:2', 'status:0', 'finish:false']);
    reader.close();
  });

  test('stop ends the session with finish(true); stop while idle does nothing', async () => {
    const { reader, events } = await open(TENTHS);
    reader.registerOutputCallback((f) => {
      events.push(`a@${f.timestamp / 1000}`);
      if (f.timestamp === 100_000) void reader.stop();
    });
    assert.equal(await reader.play({ rate: 20 }).finished, true);
    assert.deepEqual(events, ['ready', 'status:2', 'a@0', 'a@100', 'status:0', 'finish:true']);
    await reader.stop();
    await sleep(10);
    assert.equal(events.length, 6);
    reader.close();
  });

  test('jump: no finish for the replaced session, ready again, pause kept unless forceToPlay, begin clamped', async () => {
    const { reader, events } = await open(TENTHS);
    const playback = reader.play({ autoPause: true });
    await until(() => events.length === 2);
    await reader.jump(500);
    await until(() => events.length === 3);
    assert.deepEqual(events, ['ready', 'status:1', 'ready']);
    reader.pauseToNext();
    await until(() => events.length === 6);
    assert.deepEqual(events.slice(3), ['status:2', 'a@500', 'status:1']);
    await reader.jump(10_000, 50, 1, true); // past the end: total (900) − 100
    assert.equal(await playback.finished, false, 'the iterator chain survives jumps');
    assert.deepEqual(events.slice(6), ['ready', 'status:2', 'a@800', 'a@900', 'status:0', 'finish:false']);
    await reader.jump(-50, 1000, 1, true);
    await until(() => events.at(-1) === 'finish:false' && events.length > 12);
    assert.deepEqual(events.slice(12, 14), ['ready', 'status:2']);
    assert.equal(events.filter((e) => e.startsWith('a@')).length, 3 + 10);
    reader.close();
  });

  test('a stop while a jump waits for the old session cancels the jump (finish(true), no new session)', async () => {
    const { reader, events } = await open(TENTHS);
    const playback = reader.play({ autoPause: true });
    await until(() => events.length === 2);
    const jumped = reader.jump(300);
    void reader.stop();
    await jumped;
    assert.equal(await playback.finished, true);
    await sleep(20);
    assert.deepEqual(events, ['ready', 'status:1', 'status:0', 'finish:true']);
    reader.close();
  });

  test('autoQuit ends the loop; waitForQuit resolves', async () => {
    const { reader, events } = await open();
    reader.asyncRun();
    reader.play({ forceDelay: 0, autoQuit: true });
    await reader.waitForQuit();
    assert.deepEqual(events, [...PASS, 'finish:false']);
    reader.close();
  });

  test('quit interrupts a session (finish(true))', async () => {
    const { reader, events, finished } = await open(TENTHS);
    reader.play({ autoPause: true });
    await until(() => events.length === 2);
    const done = finished();
    reader.quit();
    await reader.waitForQuit();
    assert.equal(await done, true);
    assert.deepEqual(events, ['ready', 'status:1', 'status:0', 'finish:true']);
    reader.close();
  });

  test('play during a session queues the new session behind it', async () => {
    const { reader, events, finished } = await open();
    reader.play({ forceDelay: 0 });
    reader.play({ forceDelay: 0, filterUrls: ['b'] });
    await finished();
    await finished();
    assert.deepEqual(events, [...PASS, 'finish:false', 'ready', 'status:2', 'b@20', 'status:0', 'finish:false']);
    reader.close();
  });

  test('a throwing output callback ends the session and is reported', async () => {
    const { reader, events } = await open();
    const errors: BagError[] = [];
    reader.registerErrorCallback((e) => errors.push(e));
    reader.registerOutputCallback(() => {
      throw new Error('boom');
    });
    assert.equal(await reader.play({ forceDelay: 0 }).finished, true);
    assert.deepEqual(events, ['ready', 'status:2', 'status:0', 'finish:true']);
    assert.equal(errors.length, 1);
    assert.match(errors[0]!.message, /boom/);
    assert.equal(reader.getLastError(), errors[0]);
    reader.close();
  });

  test('an async output callback is awaited before the next frame', async () => {
    const { reader } = await open();
    let inFlight = 0;
    let maxInFlight = 0;
    reader.registerOutputCallback(async () => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
      await sleep(5);
      inFlight--;
    });
    await reader.play({ forceDelay: 0 }).finished;
    assert.equal(maxInFlight, 1);
    reader.close();
  });

  test('bad config is a typed error; a closed reader refuses to play', async () => {
    const { reader } = await open();
    assert.throws(() => reader.play({ rate: Number.NaN }), { code: 'INVALID_ARGUMENT' });
    reader.close();
    assert.throws(() => reader.play(), { code: 'CLOSED' });
  });
});

describe('Player: pacing (format reference §7.3)', () => {
  test('frames are never early, rate scales the schedule, skipBlank starts at the first frame', async () => {
    const rows: Array<[number, string]> = Array.from({ length: 12 }, (_, i) => [
      300_000 + i * 10_000,
      i % 2 ? 'a' : 'b',
    ]);
    const { reader } = await open(rows);
    let ready = 0;
    const late: number[] = [];
    reader.registerReadyCallback(() => (ready = performance.now()));
    reader.registerOutputCallback(
      (f) => void late.push(performance.now() - ready - (f.timestamp - 300_000) / 1000 / 2),
    );
    await reader.play({ rate: 2, skipBlank: true }).finished;
    assert.equal(late.length, 12);
    for (const l of late) assert.ok(l >= -0.1, `emitted ${(-l).toFixed(2)} ms early`);
    assert.ok(late.at(-1)! < 1000, `last frame ${late.at(-1)!.toFixed(1)} ms late`);
    // Without skipBlank the 300 ms blank is waited (150 ms at rate 2).
    late.length = 0;
    await reader.play({ rate: 2, endTime: 300 }).finished;
    assert.equal(late.length, 1);
    assert.ok(late[0]! >= 149.9 && late[0]! < 1500, `first frame after the blank: ${late[0]}`);
    reader.close();
  });

  test('forceDelay > 0 waits a fixed time before every frame', async () => {
    const { reader } = await open();
    const at: number[] = [];
    let ready = 0;
    reader.registerReadyCallback(() => (ready = performance.now()));
    reader.registerOutputCallback(() => void at.push(performance.now() - ready));
    await reader.play({ forceDelay: 15 }).finished;
    assert.equal(at.length, 3);
    assert.ok(at[2]! >= 44.9 && at[2]! < 1500, `third frame at ${at[2]}`);
    reader.close();
  });
});

describe('Player: async iteration', () => {
  test('for await yields every frame of every pass', async () => {
    const { reader } = await open();
    const got: string[] = [];
    for await (const f of reader.play({ forceDelay: 0, times: 2 })) got.push(`${f.url}@${f.timestamp / 1000}`);
    assert.deepEqual(got, ['a@10', 'b@20', 'a@30', 'a@10', 'b@20', 'a@30']);
    reader.close();
  });

  test('break stops the playback (finish(true))', async () => {
    const { reader, events } = await open();
    const playback = reader.play({ forceDelay: 0, times: 0 });
    let n = 0;
    for await (const _ of playback) if (++n === 4) break;
    assert.equal(await playback.finished, true);
    assert.equal(events.at(-1), 'finish:true');
    reader.close();
  });

  test('an aborted signal ends the loop with ABORTED', async () => {
    const { reader } = await open();
    const controller = new AbortController();
    await assert.rejects(
      (async () => {
        for await (const _ of reader.play({ forceDelay: 0, times: 0, signal: controller.signal })) controller.abort();
      })(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'ABORTED',
    );
    assert.equal(reader.getStatus(), PlayStatus.Stopped);
    assert.throws(() => reader.play({ signal: controller.signal }), { code: 'ABORTED' });
    reader.close();
  });
});
