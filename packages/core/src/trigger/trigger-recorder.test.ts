import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { ActionType } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { TempBags, until } from '../playback/test-bags.test.helper.js';
import { BagReader } from '../reader/bag-reader.js';
import type { TriggerConfig } from './trigger-config.js';
import { TriggerRecorder } from './trigger-recorder.js';
import type { TriggerHooks, TriggerTimers } from './trigger-types.js';

const bags = new TempBags();
after(() => bags.remove());
let dirs = 0;

/** A fake capture clock and timers: tests move time by hand, so windows and waits are exact and instant. */
class FakeTime {
  nowUs = 0;
  private timers: Array<{ at: number; fn: () => void; id: number }> = [];
  private nextId = 1;
  readonly clock = () => this.nowUs;
  readonly wallClock = () => 1_700_000_000_000 + Math.floor(this.nowUs / 1000);
  readonly api: TriggerTimers = {
    setTimeout: (fn, ms) => {
      const id = this.nextId++;
      this.timers.push({ at: this.nowUs + ms * 1000, fn, id });
      return id;
    },
    clearTimeout: (id) => {
      this.timers = this.timers.filter((t) => t.id !== id);
    },
  };

  /** Timers due within the next hour (the sweep is armed far out in these tests). */
  get armed(): number {
    return this.timers.filter((t) => t.at - this.nowUs < 3_600_000_000).length;
  }

  /**
   * Sets the clock to `us`, firing due timers in order; after each one the event loop turns once, as it would
   * right after a real timer, so the recorder's continuation runs at the timer's instant.
   */
  async to(us: number): Promise<void> {
    for (;;) {
      const due = this.timers.filter((t) => t.at <= us).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.nowUs = Math.max(this.nowUs, due.at);
      due.fn();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.nowUs = us;
  }
}

const frame = (url: string, bytes = 2, actionType = ActionType.Publish, timestamp = -1): Frame => ({
  timestamp,
  url,
  data: new Uint8Array(bytes).fill(url.length),
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType,
});

function setup(config: Partial<TriggerConfig> = {}, hooks: TriggerHooks = {}) {
  const time = new FakeTime();
  const dumpDir = join(bags.dir, `dumps-${dirs++}`);
  const recorder = new TriggerRecorder(
    {
      dumpDir,
      fileType: 'memjson',
      defaultPreMs: 100,
      defaultPostMs: 50,
      retentionGuardMs: 10,
      sweepIntervalMs: 1e9,
      ...config,
    },
    { clock: time.clock, wallClock: time.wallClock, timers: time.api, hooks },
  );
  recorder.start();
  /** Steps time by 5 ms up to `toMs` (inclusive), ingesting each url on its period (ms) and firing timers. */
  let next = 0; // the first 5 ms step not fed yet
  const feed = async (toMs: number, urls: Record<string, number> = { a: 10, b: 25 }) => {
    for (next = Math.max(next, Math.ceil(time.nowUs / 5000) * 5); next <= toMs; next += 5) {
      const t = next;
      await time.to(t * 1000);
      for (const [url, every] of Object.entries(urls)) if (t % every === 0) recorder.ingest(frame(url));
    }
  };
  return { time, recorder, feed, dumpDir };
}

async function readDump(path: string) {
  const reader = await BagReader.create(path);
  const info = reader.getInfo();
  const frames: string[] = [];
  for await (const f of reader.frames()) frames.push(`${f.url}@${f.timestamp / 1000}`);
  reader.close();
  return { info, frames };
}

const range = (url: string, from: number, to: number, every: number, shift = 0) =>
  Array.from({ length: Math.floor((to - from) / every) + 1 }, (_, i) => [url, from + i * every - shift] as const);
const merged = (...lists: ReadonlyArray<ReadonlyArray<readonly [string, number]>>) =>
  lists
    .flat()
    .sort((x, y) => x[1] - y[1])
    .map(([u, t]) => `${u}@${t}`);

describe('TriggerRecorder (format reference §9)', () => {
  test('writes pre + post around the trigger after the post window + guard, re-timed to the dump start', async () => {
    const events: string[] = [];
    const { time, recorder, feed, dumpDir } = setup(
      {},
      {
        onDumpStarted: (i) => events.push(`started:${i.frames}`),
        onFrame: () => events.push('frame'),
        onDumpFinished: (r) => events.push(`finished:${r.frames}`),
      },
    );
    await feed(200);
    const dump = recorder.trigger({ reason: 'crash', nameHint: 'edr' });
    assert.equal(recorder.stats().dumping, true);
    await until(() => time.armed === 1);
    await feed(259);
    assert.equal(events.length, 0, 'nothing is written before T + post + guard');
    await feed(300);
    const result = await dump;
    assert.equal(result.file, join(dumpDir, 'edr.memjson').replaceAll('\\', '/'));
    assert.deepEqual([result.frames, result.urls, result.triggerUs, result.durationUs], [23, 2, 200_000, 150_000]);
    assert.equal(result.startTimestamp, 1_700_000_000_100);
    assert.deepEqual(events, ['started:23', ...Array(23).fill('frame'), 'finished:23']);
    const { info, frames } = await readDump(result.file);
    assert.equal(info.tagName, 'crash');
    assert.equal(info.startTimestamp, 1_700_000_000_100);
    // [T − 100 ms, T + 50 ms] = [100, 250] ms, shifted by the dump start (100 ms).
    assert.deepEqual(frames, merged(range('a', 100, 250, 10, 100), range('b', 100, 250, 25, 100)));
    assert.equal(info.urls.find((u) => u.url === 'a')?.loss, 0);
    assert.equal(recorder.stats().dumping, false);
    await recorder.quit();
  });

  test('UrlConfig: onlyFront keeps the pre window, onlyBack the post window, both disable the url', async () => {
    const { time, recorder, feed } = setup({
      urlOverrides: {
        front: { onlyFront: true },
        back: { onlyBack: true },
        none: { onlyFront: true, onlyBack: true },
        short: { preMs: 20 },
      },
    });
    const urls = { front: 10, back: 10, none: 10, short: 10 };
    await feed(200, urls);
    const dump = recorder.trigger({ outFile: bags.path('urlconfig') });
    await until(() => time.armed === 1);
    await feed(300, urls);
    const { frames } = await readDump((await dump).file);
    // Dump start = T − 100 ms (the earliest selected frame); equal capture times keep the urls' first-seen order.
    assert.deepEqual(
      frames,
      merged(range('front', 100, 200, 10, 100), range('back', 200, 250, 10, 100), range('short', 180, 250, 10, 100)),
    );
    assert.equal(recorder.stats().dropped.disabled, 31, 'every `none` frame from 0 to 300 ms');
    await recorder.quit();
  });

  test('trigger params shrink the windows and select urls; post 0 writes at once', async () => {
    const { recorder, feed } = setup();
    const urls = { 'cam/front': 10, 'cam/rear': 10, imu: 10, gps: 10 };
    await feed(200, urls);
    const shrunk = await recorder.trigger({
      outFile: bags.path('shrunk'),
      preMs: 30,
      postMs: 0,
      blacklist: ['gps'],
      filterStr: 'CAM, imu',
    });
    assert.deepEqual(
      (await readDump(shrunk.file)).frames,
      merged(
        range('cam/front', 170, 200, 10, 170),
        range('cam/rear', 170, 200, 10, 170),
        range('imu', 170, 200, 10, 170),
      ),
    );
    const black = await recorder.trigger({
      outFile: bags.path('black'),
      preMs: 0,
      postMs: 0,
      filterStr: 'cam',
      blackMode: true,
      whitelist: ['imu', 'cam/rear'],
    });
    assert.deepEqual((await readDump(black.file)).frames, ['imu@0']);
    const wider = await recorder.trigger({ outFile: bags.path('wider'), preMs: 5_000, postMs: 0, whitelist: ['gps'] });
    assert.equal(wider.frames, 11, 'a trigger cannot widen the configured 100 ms pre window');
    await recorder.quit();
  });

  test('one dump at a time; not running and oversized windows are refused; quit abandons a waiting dump', async () => {
    const failed: string[] = [];
    const { time, recorder, feed, dumpDir } = setup({}, { onDumpFailed: (e) => failed.push(e.code) });
    await feed(100);
    const first = recorder.trigger({ nameHint: 'abandoned' });
    await assert.rejects(recorder.trigger(), (e: unknown) => BagError.isInstance(e) && e.code === 'BUSY');
    await until(() => time.armed === 1);
    await recorder.quit();
    await assert.rejects(first, (e: unknown) => BagError.isInstance(e) && e.code === 'ABORTED');
    assert.deepEqual(failed, ['ABORTED']);
    assert.equal(existsSync(join(dumpDir, 'abandoned.memjson')), false);
    await assert.rejects(recorder.trigger(), { code: 'CLOSED' });
    assert.equal(recorder.ingest(frame('a')), false);
    recorder.start();
    await assert.rejects(recorder.trigger({ preMs: 1e300 }), { code: 'INVALID_ARGUMENT' });
    assert.deepEqual(recorder.stats().dumps, { finished: 0, failed: 1, rejected: 3 });
    assert.equal(recorder.stats().dropped.notRunning, 1);
    await recorder.quit();
  });

  test('rotation keeps maxDumpFileCount auto-named dumps; explicit outFile dumps are not rotated', async () => {
    const rotated: string[] = [];
    const { recorder, feed, dumpDir } = setup(
      { maxDumpFileCount: 2, defaultPostMs: 0 },
      { onFileRotated: (f) => rotated.push(f) },
    );
    await feed(50);
    const names: string[] = [];
    for (let i = 0; i < 3; i++) names.push((await recorder.trigger({ nameHint: 'dump' })).file);
    await recorder.trigger({ outFile: join(dumpDir, 'kept.memjson') });
    assert.deepEqual(
      names.map((n) => n.split('/').pop()),
      ['dump.memjson', 'dump_1.memjson', 'dump_2.memjson'],
    );
    assert.deepEqual(
      rotated.map((n) => n.split('/').pop()),
      ['dump.memjson'],
    );
    // Each dump has its summary sidecar; a rotated dump's goes with it.
    assert.deepEqual(readdirSync(dumpDir).sort(), [
      'dump_1.memjson',
      'dump_1.memjson.json',
      'dump_2.memjson',
      'dump_2.memjson.json',
      'kept.memjson',
      'kept.memjson.json',
    ]);
    const auto = await recorder.trigger({});
    assert.match(auto.file, /\/\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d-\d\d\d\.memjson$/);
    // Rotation counts every file of the extension in the directory (kept.memjson too): 3 ≥ 2 → the two oldest go.
    assert.deepEqual(
      auto.rotated.map((n) => n.split('/').pop()),
      ['dump_1.memjson', 'dump_2.memjson'],
    );
    await recorder.quit();
  });

  test('drop policies, limits and their counters', async () => {
    const warnings: string[] = [];
    const drop = setup(
      { defaultMaxSize: 10, defaultMaxPacketSize: 5, maxCacheSize: 5 + 4 + 4, defaultPostMs: 0 },
      { onWarning: (m) => warnings.push(m) },
    );
    const r = drop.recorder;
    assert.deepEqual([r.ingest(frame('a', 4)), r.ingest(frame('a', 4)), r.ingest(frame('a', 4))], [true, true, false]);
    assert.equal(r.ingest(frame('b', 6)), false, 'larger than maxPacketSize');
    assert.equal(r.ingest(frame('b', 5)), true);
    assert.equal(r.ingest(frame('c', 1)), false, 'global cap');
    assert.deepEqual(drop.recorder.stats().dropped, {
      notRunning: 0,
      disabled: 0,
      busy: 0,
      packetSize: 1,
      urlSize: 0,
      cacheSize: 0,
      overflow: 2,
    });
    await r.quit();

    const cover = setup(
      { overflow: 'coverOldest', defaultMaxSize: 10, urlOverrides: { big: { maxSize: 0 } }, maxCacheSize: 16 },
      { onWarning: (m) => warnings.push(m) },
    );
    const c = cover.recorder;
    for (let i = 0; i < 4; i++) c.ingest(frame('a', 4));
    assert.equal(c.ingest(frame('b', 12)), false, 'over the url cap of 10');
    assert.equal(c.ingest(frame('big', 17)), false, 'over maxCacheSize itself');
    assert.equal(c.ingest(frame('big', 12)), false, 'coverOldest only evicts its own url: no room');
    assert.equal(c.ingest(frame('big', 4)), true);
    const stats = c.stats();
    assert.deepEqual([stats.frames, stats.bytes, stats.covered], [3, 12, 2]);
    assert.deepEqual(stats.dropped, {
      notRunning: 0,
      disabled: 0,
      busy: 0,
      packetSize: 0,
      urlSize: 1,
      cacheSize: 1,
      overflow: 1,
    });
    assert.equal(warnings.length, 1);
    await c.quit();
  });

  test('loss ratio since the previous dump; busySkipData drops what arrives while writing; retention evicts', async () => {
    let recorderRef: TriggerRecorder | undefined;
    const { recorder, feed, time } = setup(
      { busySkipData: true, defaultMaxPacketSize: 3, defaultPostMs: 0 },
      { onFrame: () => recorderRef!.ingest(frame('a')) },
    );
    recorderRef = recorder;
    await feed(50, { a: 10 });
    recorder.ingest(frame('a', 9));
    recorder.ingest(frame('a', 9));
    const first = await recorder.trigger({ outFile: bags.path('loss') });
    assert.equal(recorder.stats().dropped.busy, first.frames);
    const { info } = await readDump(first.file);
    assert.equal(info.urls[0]!.loss, 2 / 8);
    // Retention: pre 100 + max post 0 + 2 × guard 10 = 120 ms.
    await time.to(1_000_000);
    recorder.ingest(frame('a'));
    assert.equal(recorder.stats().frames, 1);
    const second = await recorder.trigger({ outFile: bags.path('loss2') });
    // The first dump's onFrame ingests were dropped while writing: 6 offered, 6 lost since then, plus this one kept.
    assert.equal((await readDump(second.file)).info.urls[0]!.loss, 6 / 7);
    await recorder.quit();
  });

  test('capture times: a negative timestamp takes the recorder clock, a given one is kept; fields are stored as Get', async () => {
    const { time, recorder } = setup({ defaultPostMs: 0 });
    await time.to(500_000);
    recorder.ingest(frame('set', 1, ActionType.Set, 450_000));
    recorder.ingest(frame('pub', 1, ActionType.Publish));
    const result = await recorder.trigger({ outFile: bags.path('actions') });
    const reader = await BagReader.create(result.file);
    const got = [];
    for await (const f of reader.frames()) got.push([f.url, f.timestamp, f.actionType]);
    reader.close();
    assert.deepEqual(got, [
      ['set', 0, ActionType.Get],
      ['pub', 50_000, ActionType.Subscribe],
    ]);
    await recorder.quit();
    assert.throws(
      () => {
        recorder.start();
        recorder.ingest({ ...frame('x'), url: '' });
      },
      { code: 'INVALID_ARGUMENT' },
    );
    // A field of the wrong type is refused when offered, not when the dump writes the frame.
    assert.throws(() => recorder.ingest({ ...frame('x'), serType: undefined } as never), {
      code: 'INVALID_ARGUMENT',
      message: /^frame serType must be a string, not undefined/,
    });
    assert.throws(() => recorder.ingest(null as never), { code: 'INVALID_ARGUMENT' });
    await recorder.quit();
  });

  test('dumps embed the schemas of the urls they hold (pushed or from the callback), byte for byte, and no others', async () => {
    const warnings: string[] = [];
    const { time, recorder } = setup({ defaultPostMs: 0 }, { onWarning: (m) => warnings.push(m) });
    const bytes = (n: number, seed: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff);
    const pose = { name: 'pb.Pose', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: bytes(300, 7) };
    const unused = { name: 'pb.Unused', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: bytes(40, 9) };
    assert.equal(recorder.pushSchema(pose), true);
    assert.equal(recorder.pushSchema(unused), true);
    assert.equal(recorder.pushSchema({ ...pose, data: bytes(300, 8) }), false, 'a conflicting schema is refused');
    assert.equal(warnings.length, 1);
    assert.match(warnings[0]!, /pb\.Pose/);
    const asked: string[] = [];
    const map = { name: 'fb.Map', encoding: 'flatbuffer', schemaType: SchemaType.Flatbuffers, data: bytes(64, 3) };
    recorder.registerSchemaCallback((name) => {
      asked.push(name);
      return name === map.name ? map : undefined;
    });
    await time.to(100_000);
    const typed = (url: string, serType: string, schemaType: SchemaType): Frame => ({
      ...frame(url, 8),
      serType,
      schemaType,
    });
    recorder.ingest(typed('/pose', 'pb.Pose', SchemaType.Protobuf));
    recorder.ingest(typed('/map', 'fb.Map', SchemaType.Flatbuffers));
    recorder.ingest(typed('/raw', 'raw', SchemaType.Raw));
    const result = await recorder.trigger({ outFile: bags.path('schemas') });
    const reader = await BagReader.create(result.file);
    const schemas = reader.getSchemas();
    reader.close();
    const byName = new Map(schemas.map((s) => [s.name, s]));
    assert.deepEqual([...byName.keys()].sort(), ['fb.Map', 'pb.Pose'], 'only the schemas of the dumped urls');
    assert.deepEqual(byName.get('pb.Pose')!.data, pose.data);
    assert.deepEqual(byName.get('fb.Map')!.data, map.data);
    assert.equal(byName.get('pb.Pose')!.schemaType, SchemaType.Protobuf);
    assert.ok(asked.includes('fb.Map'), 'the callback answered what was not pushed');
    await recorder.quit();
  });
});
