import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { McapIndexedReader } from '@mcap/core';
import {
  ActionRecorder,
  ActionType,
  analyzeReport,
  BagReader,
  type BagSummary,
  BagWriter,
  type Frame,
  type FrameSink,
  parseCompanionMeta,
  REPORT_JSON_SCHEMA,
  SchemaType,
  SnapshotSampler,
} from '@vlink/bag';
import { after, describe, test } from '@vlink/fixtures/test';
import Ajv2020Module from 'ajv/dist/2020.js';
import { runCli, SLOW, tempDir } from './testing/harness.js';

// The done-when session of issue #23, recorded with the library's helpers: two cameras at 30 Hz with jitter (one
// skipped frame on the front camera; the rear camera's driver queue overflows, counted with writer.count), a state at
// 100 Hz assembled by SnapshotSampler (incomplete at the start, stale while the joints stall, one repeated sample, one
// late tick), actions at a variable commit rate recorded by ActionRecorder (one partial, one failed submit). Every
// time comes from a simulated clock, so the expectations are exact. Then: both times of every message and the
// counters by cause come back from .vdb, .vcap and plain .mcap (and from @mcap/core), from the sidecar, and from the
// validation report (library and `vlink-bag report --json`).

const tmp = tempDir();
after(() => tmp.cleanup());
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
const START_MS = 1_780_000_000_000;
const ms = 1000;

/** The camera sample (publish) time of frame i: 30 Hz with ±1.5 ms jitter. */
const cameraSample = (i: number) => Math.round(i * 33_333.3) + (((i * 31) % 7) - 3) * 500;

interface Recorded {
  /** Every frame the writer accepted, with the log time it used. */
  pushed: Frame[];
  counters: Record<string, Record<string, number>>;
  sampler: ReturnType<SnapshotSampler['stats']>;
  stateTicks: number[];
}

async function recordSession(path: string): Promise<Recorded> {
  const writer = await BagWriter.create(path, { startTimestamp: START_MS });
  const pushed: Frame[] = [];
  const sink: FrameSink = {
    push(frame) {
      const timestamp = writer.push(frame);
      if (timestamp >= 0) pushed.push({ ...frame, timestamp, data: frame.data.slice() });
      return timestamp;
    },
    count: (url, cause, n) => writer.count(url, cause, n),
  };
  let now = 0;
  const clock = () => now;
  const sampler = new SnapshotSampler<number>({
    sink,
    url: '/state',
    components: ['joints', 'gripper'],
    rateHz: 100,
    clock,
    maxAgeUs: 16 * ms,
    maxSpanUs: 18 * ms,
    serType: 'json',
    schemaType: SchemaType.Raw,
    encode: (s) => new TextEncoder().encode(JSON.stringify([s.components.joints!.value, s.components.gripper!.value])),
  });
  const actions = new ActionRecorder({ sink, url: '/action', clock, serType: 'json', schemaType: SchemaType.Raw });

  const events: Array<{ at: number; run(): void }> = [];
  const at = (time: number, run: () => void) => events.push({ at: time, run });
  const camera = (url: string, i: number, publishTime: number, latency: number) =>
    at(publishTime + latency, () =>
      sink.push({
        timestamp: now,
        publishTime,
        url,
        data: new Uint8Array([i, url.length, 0xc0]),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      }),
    );
  for (let i = 0; i < 60; i++) {
    if (i === 17) at(cameraSample(18) + 2 * ms, () => writer.count('/camera/front', 'missedFrame', 1));
    else camera('/camera/front', i, cameraSample(i), 2 * ms + ((i * 7919) % 11) * 300);
    // The rear camera is triggered with the front one (its stamp 0.3 ms later on every third frame); its driver's
    // queue overflows while frames 30…35 wait, and the driver reports the loss once it recovers.
    if (i >= 30 && i <= 35) continue;
    camera('/camera/rear', i, cameraSample(i) + (i % 3 === 0 ? 300 : 0), 2_500);
    if (i === 36) at(cameraSample(36) + 2_600, () => writer.count('/camera/rear', 'queueOverflow', 6));
  }
  // State components: joints every 5 ms (stalled 500…560 ms; at 1002 and 1007 ms repeating the sample of 997 ms),
  // the gripper every 20 ms from 15 ms. The control loop ticks every 10 ms, but not at 1500 ms. So: ticks 0 and 10
  // are incomplete (no gripper yet); 510 has nothing new (the stall began, the gripper's 495 was recorded at 500) and
  // 1010 neither (the repeated joint sample); 520…560 are stale (joints older than 16 ms); 1500 is a missed slot.
  for (let t = 2; t < 2000; t += 5) {
    if (t >= 500 && t < 560) continue;
    const repeat = t === 1002 || t === 1007;
    const sampleMs = repeat ? 996 : t - 1;
    at(t * ms, () => sampler.update('joints', t, { version: repeat ? 997 : t, sampleUs: sampleMs * ms }));
  }
  for (let t = 15; t < 2000; t += 20) at(t * ms, () => sampler.update('gripper', t));
  const stateTicks: number[] = [];
  for (let t = 0; t < 2000; t += 10)
    if (t !== 1500)
      at(t * ms, () => {
        if (sampler.tick().recorded) stateTicks.push(now);
      });
  // Actions: submits start at 43 ms and then every 50…200 ms; submit k takes 4 + k ms; #3 is partial, #5 fails.
  const steps = [50, 80, 120, 60, 200, 90];
  for (let k = 0, start = 43; start < 1900; start += steps[k % 6]!, k++) {
    const data = new TextEncoder().encode(JSON.stringify({ k }));
    let stamp: ReturnType<ActionRecorder['begin']>;
    at(start * ms, () => (stamp = actions.begin()));
    const result = k === 3 ? 'partial' : k === 5 ? 'failed' : 'full';
    at((start + 4 + k) * ms, () => actions.finish(stamp, data, result, result === 'failed' ? 'arm busy' : undefined));
  }

  events.sort((a, b) => a.at - b.at); // stable: same-time events keep the order they were scheduled in
  for (const event of events) {
    now = event.at;
    event.run();
  }
  await writer.close();
  return { pushed, counters: writer.stats().droppedByUrl, sampler: sampler.stats(), stateTicks };
}

const EXPECTED_COUNTERS = {
  '/camera/front': { missedFrame: 1 },
  '/camera/rear': { queueOverflow: 6 },
  '/state': { incompleteSnapshot: 2, staleSnapshot: 5, duplicateSample: 2, missedSlot: 1 },
  '/action': { submitPartial: 1, submitFailed: 1 },
};

/** [log, publish] per url, as the session pushed them. */
function timesByUrl(frames: Iterable<Frame>): Map<string, Array<[number, number]>> {
  const out = new Map<string, Array<[number, number]>>();
  for (const f of frames) out.set(f.url, [...(out.get(f.url) ?? []), [f.timestamp, f.publishTime ?? f.timestamp]]);
  return out;
}

describe('teleoperation session recorded with SnapshotSampler and ActionRecorder', () => {
  for (const ext of ['.vdb', '.vcap', '.mcap']) {
    test(`${ext}: publish/log times and counters by cause round-trip (file, sidecar, report)`, SLOW, async () => {
      const path = tmp.path(`teleop${ext}`);
      const { pushed, counters, sampler, stateTicks } = await recordSession(path);
      // What happened, as the helpers and the writer saw it.
      assert.deepEqual(counters, EXPECTED_COUNTERS);
      assert.deepEqual(sampler, { ticks: 199, recorded: 190, skipped: EXPECTED_COUNTERS['/state'], refused: 0 });
      const expectedTicks = Array.from({ length: 200 }, (_, i) => i * 10 * ms).filter(
        (t) => t >= 20 * ms && (t < 510 * ms || t > 560 * ms) && t !== 1010 * ms && t !== 1500 * ms,
      );
      assert.deepEqual(stateTicks, expectedTicks);
      const want = timesByUrl(pushed);
      assert.deepEqual(
        want.get('/state')!.map(([, publish]) => publish),
        expectedTicks,
      );
      assert.equal(want.get('/camera/front')!.length, 59);
      assert.equal(want.get('/camera/rear')!.length, 54);
      // Action frames: publish = submit start, log = its end.
      assert.deepEqual(want.get('/action')!.slice(0, 3), [
        [47 * ms, 43 * ms],
        [98 * ms, 93 * ms],
        [179 * ms, 173 * ms],
      ]);

      // Read back by our reader: both times of every message, the companion metadata, the counters.
      const reader = await BagReader.create(path);
      const metas: Array<ReturnType<typeof parseCompanionMeta>> = [];
      let got: Map<string, Array<[number, number]>>;
      try {
        assert.deepEqual(reader.getInfo().counters, EXPECTED_COUNTERS);
        const frames: Frame[] = [];
        for await (const f of reader.frames()) {
          frames.push({ ...f, data: f.data.slice() });
          if (f.url === '/action/meta') metas.push(parseCompanionMeta(f));
        }
        got = timesByUrl(frames);
      } finally {
        reader.close();
      }
      assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort());
      for (const [url, times] of want) assert.deepEqual(got.get(url), times, url);
      assert.deepEqual(
        metas.map((m) => m.submit?.result),
        want.get('/action')!.map((_, k) => (k === 3 ? 'partial' : k === 5 ? 'failed' : 'full')),
      );
      assert.deepEqual(metas[5]!.submit, { startUs: 553 * ms, endUs: 562 * ms, result: 'failed', detail: 'arm busy' });

      // The sidecar written at close.
      const summary = JSON.parse(readFileSync(`${path}.json`, 'utf8')) as BagSummary;
      assert.deepEqual(summary.counters, EXPECTED_COUNTERS);
      assert.equal(summary.recording.end, 'clean');
      for (const [url, times] of want) {
        const s = summary.streams.find((stream) => stream.url === url)!;
        assert.deepEqual(
          [s.count, s.firstLogUs, s.lastLogUs, s.firstPublishUs, s.lastPublishUs],
          [
            times.length,
            Math.min(...times.map((t) => t[0])),
            Math.max(...times.map((t) => t[0])),
            Math.min(...times.map((t) => t[1])),
            Math.max(...times.map((t) => t[1])),
          ],
          url,
        );
      }

      // MCAP files: the official reader sees the same log and publish times.
      if (ext !== '.vdb') {
        const bytes = readFileSync(path);
        const mcap = await McapIndexedReader.Initialize({
          readable: {
            size: async () => BigInt(bytes.length),
            read: async (offset: bigint, length: bigint) => bytes.subarray(Number(offset), Number(offset + length)),
          },
        });
        const topics = new Map([...mcap.channelsById].map(([id, c]) => [id, c.topic]));
        const startNs = BigInt(START_MS) * 1_000_000n;
        const official = new Map<string, Array<[number, number]>>();
        for await (const m of mcap.readMessages()) {
          const url = topics.get(m.channelId)!;
          const us = (ns: bigint) => Number((ns - startNs) / 1000n);
          official.set(url, [...(official.get(url) ?? []), [us(m.logTime), us(m.publishTime)]]);
        }
        for (const [url, times] of want) assert.deepEqual(official.get(url), times, `@mcap/core ${url}`);
      }

      // The validation report: per stream rate and histogram, the camera pair found by their shared publish times.
      const again = await BagReader.create(path);
      const report = await analyzeReport(again).finally(() => again.close());
      assert.deepEqual(report.counters, EXPECTED_COUNTERS);
      const state = report.streams.find((s) => s.url === '/state')!;
      assert.equal(state.time, 'log');
      assert.equal(state.intervalUs!.p50, 10 * ms);
      assert.equal(state.intervalHistogram!.counts.reduce((a, b) => a + b, 0) + state.intervalHistogram!.over, 189);
      assert.equal(report.streams.find((s) => s.url === '/camera/front')!.time, 'publish');
      assert.equal(report.groups.length, 1);
      const [group] = report.groups;
      assert.equal(group!.reference, '/camera/front');
      const rear = group!.members[0]!;
      const rearIndexes = Array.from({ length: 60 }, (_, i) => i).filter((i) => i < 30 || i > 35);
      assert.deepEqual([rear.url, rear.matched, rear.unmatched], ['/camera/rear', 53, 1]); // its frame 17 has no partner
      assert.equal(rear.exact, rearIndexes.filter((i) => i !== 17 && i % 3 !== 0).length);
      assert.deepEqual(rear.offsetUs, { min: 0, p50: 0, p99: 300, max: 300 });

      if (ext === '.vcap') {
        const cli = await runCli(['report', path, '--json']);
        assert.equal(cli.code, 0, cli.stderr);
        const document = JSON.parse(cli.stdout);
        const check = new Ajv2020({ allErrors: true, strict: false }).compile(REPORT_JSON_SCHEMA);
        assert.ok(check(document), JSON.stringify(check.errors));
        assert.deepEqual(document.counters, EXPECTED_COUNTERS);
        assert.deepEqual(document.groups, JSON.parse(JSON.stringify(report.groups)));
      }
    });
  }
});
