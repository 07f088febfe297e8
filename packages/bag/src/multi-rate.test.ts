import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagReader,
  type BagSummary,
  BagWriter,
  type Frame,
  parseCompanionMeta,
  SchemaType,
} from './index.js';

// A synthetic multi-rate session (issue #23): a 30 Hz camera with jitter and one skipped frame, a 100 Hz state, actions
// at a variable commit rate with a failed submit the application counts, and a second camera whose queue overflows.
// Each message has a publish (sample) time and a later log (receive) time; both must come back from every format.

const dir = mkdtempSync(join(tmpdir(), 'vlink-multirate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const frame = (url: string, timestamp: number, publishTime: number, i: number): Frame => ({
  timestamp,
  publishTime,
  url,
  data: new Uint8Array([i & 0xff, i >> 8, url.length]),
  serType: 'raw',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
});

/** The session's frames in log-time order, and the action submits (start = publish, end = log). */
function session(): { frames: Frame[]; submits: Array<{ start: number; end: number; ok: boolean }> } {
  const frames: Frame[] = [];
  for (let i = 0; i < 60; i++) {
    if (i === 17) continue; // the skipped camera frame
    const publish = Math.round(i * 33_333.3) + (((i * 31) % 7) - 3) * 500; // ±1.5 ms sample jitter
    frames.push(frame('/camera/front', publish + 2_000 + ((i * 7919) % 11) * 300, publish, i));
  }
  for (let i = 0; i < 200; i++) frames.push(frame('/state', i * 10_000 + 150, i * 10_000, i));
  const submits: Array<{ start: number; end: number; ok: boolean }> = [];
  let t = 40_000;
  for (let k = 0; k < 12; k++) {
    t += [50, 80, 120, 60, 200, 90][k % 6]! * 1000; // a variable commit rate
    submits.push({ start: t, end: t + 4_000 + k * 100, ok: k !== 5 });
  }
  submits.forEach((s, k) => {
    if (s.ok) frames.push(frame('/action', s.end, s.start, k));
  });
  return { frames: frames.sort((a, b) => a.timestamp - b.timestamp), submits };
}

const expectedTimes = (frames: Frame[], url: string) =>
  frames.filter((f) => f.url === url).map((f) => [f.timestamp, f.publishTime]);

async function record(path: string): Promise<{ frames: Frame[]; rear: Frame[]; counters: unknown }> {
  const { frames, submits } = session();
  const writer = await BagWriter.create(path, {
    maxQueueTimeMs: 0,
    maxTaskDepth: 10,
    startTimestamp: 1_700_000_000_000,
  });
  const rear: Frame[] = [];
  for (const f of frames) {
    assert.equal(await writer.write(f), f.timestamp);
    if (f.url === '/action') {
      const k = f.data[0]!;
      writer.pushMeta(f, { submitStartUs: submits[k]!.start, submitEndUs: submits[k]!.end, result: 'full' });
    }
    if (f.timestamp > 1_000_000 && rear.length === 0) {
      // The overflow: one synchronous burst of 100 frames into an empty 10-frame queue.
      while (writer.stats().queuedFrames > 0) await new Promise((resolve) => setTimeout(resolve, 2));
      for (let i = 0; i < 100; i++) {
        const r = frame('/camera/rear', f.timestamp + i, f.timestamp + i - 30_000, i);
        if (writer.push(r) >= 0) rear.push(r);
      }
    }
  }
  writer.count('/action', 'submitFailed', submits.filter((s) => !s.ok).length);
  await writer.close();
  return { frames, rear, counters: writer.stats().droppedByUrl };
}

describe('multi-rate session: publish and log times, counters by cause', () => {
  for (const ext of ['.vdb', '.vdbx', '.vcap', '.vcapx']) {
    test(`${ext}: both times of every message and the counters read back from the file`, async () => {
      const path = join(dir, `session${ext}`);
      const { frames, rear, counters } = await record(path);
      const expected = { '/action': { submitFailed: 1 }, '/camera/rear': { queueDepth: 90 } };
      assert.equal(rear.length, 10);
      assert.deepEqual(counters, expected);
      // The sidecar summary written at close.
      const summary = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as BagSummary;
      assert.equal(summary.semantics, 1);
      assert.deepEqual(summary.counters, expected);
      assert.deepEqual(summary.errors, []);
      assert.equal(summary.recording.end, 'clean');
      assert.equal(summary.recording.startTimestamp, 1_700_000_000_000);
      const stream = (url: string) => summary.streams.find((s) => s.url === url)!;
      for (const [url, list] of [
        ['/camera/front', frames.filter((f) => f.url === '/camera/front')],
        ['/camera/rear', rear],
        ['/state', frames.filter((f) => f.url === '/state')],
        ['/action', frames.filter((f) => f.url === '/action')],
      ] as const) {
        const s = stream(url);
        const logs = list.map((f) => f.timestamp);
        const publishes = list.map((f) => f.publishTime!);
        assert.deepEqual(
          [s.action, s.count, s.firstLogUs, s.lastLogUs, s.firstPublishUs, s.lastPublishUs],
          ['Pub', list.length, Math.min(...logs), Math.max(...logs), Math.min(...publishes), Math.max(...publishes)],
          url,
        );
      }
      assert.equal(stream('/camera/front').count, 59);
      assert.deepEqual(stream('/state').intervalUs, { min: 10_000, p50: 10_000, p99: 10_000, max: 10_000 });
      assert.equal(stream('/state').rateHz, 100);
      // The skipped camera frame makes the largest interval: about two periods.
      const front = frames.filter((f) => f.url === '/camera/front').map((f) => f.timestamp);
      const intervals = front.slice(1).map((t, i) => t - front[i]!);
      assert.equal(stream('/camera/front').intervalUs!.max, Math.max(...intervals));
      assert.ok(Math.max(...intervals) > 60_000);
      assert.equal(stream('/action/meta').count, 11);
      const lastLog = Math.max(...frames.map((f) => f.timestamp), ...rear.map((f) => f.timestamp));
      assert.equal(summary.recording.endTimestamp, 1_700_000_000_000 + Math.floor(lastLog / 1000));
      const reader = await BagReader.create(path);
      try {
        assert.deepEqual(reader.getInfo().counters, expected);
        const byUrl = new Map<string, Array<[number, number | undefined]>>();
        const metas: unknown[] = [];
        for await (const f of reader.frames()) {
          if (f.url === '/action/meta') metas.push({ ...parseCompanionMeta(f), at: [f.timestamp, f.publishTime] });
          else byUrl.set(f.url, [...(byUrl.get(f.url) ?? []), [f.timestamp, f.publishTime]]);
        }
        for (const url of ['/camera/front', '/state', '/action'])
          assert.deepEqual(byUrl.get(url), expectedTimes(frames, url), url);
        assert.deepEqual(byUrl.get('/camera/rear'), expectedTimes(rear, '/camera/rear'));
        assert.equal(byUrl.get('/camera/front')!.length, 59);
        // Companion metadata: one per recorded action, with the action's own log and publish times.
        const actions = frames.filter((f) => f.url === '/action');
        assert.deepEqual(
          metas.map((m) => (m as { at: unknown }).at),
          actions.map((f) => [f.timestamp, f.publishTime]),
        );
        assert.equal((metas[0] as { result: string }).result, 'full');
        // A window on publish times is not the same window on log times: /state is sampled 150 µs before it is logged.
        const state = async (timeBase: 'log' | 'publish') => {
          const out: number[] = [];
          for await (const f of reader.frames({ filterUrls: ['/state'], beginTime: 500, endTime: 1000, timeBase }))
            out.push(f.publishTime!);
          return out;
        };
        assert.deepEqual(
          await state('publish'),
          Array.from({ length: 51 }, (_, i) => (50 + i) * 10_000),
        );
        assert.deepEqual(
          await state('log'),
          Array.from({ length: 50 }, (_, i) => (50 + i) * 10_000),
        );
        await assert.rejects(
          async () => {
            for await (const _ of reader.frames({ timeBase: 'wall' as 'log' })) break;
          },
          { code: 'INVALID_ARGUMENT' },
        );
      } finally {
        reader.close();
      }
    });
  }
});
