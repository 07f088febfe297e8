import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test as nodeTest } from 'node:test';
import type { Backend, BackendReader } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { MaintenanceProgress } from '../maintenance/check-report.js';
import { resolveWriterConfig, type WriterConfig } from '../model/config.js';
import type { Frame } from '../model/frame.js';
import { SchemaType } from '../model/schema-type.js';
import { createTestContext } from './context.js';
import { patternBytes, SAMPLE_PROTO_SCHEMA, sampleFrames } from './sample-frames.js';
import { writeFrame } from './write-frame.js';

/** Every case has a timeout on every runtime (Deno's test runner has none of its own; the suite's is 120 s too). */
const test = (name: string, fn: () => Promise<void>) => nodeTest(name, { timeout: 120_000 }, fn);

export interface ConformanceOptions {
  backend: Backend;
  /** Extension to test, e.g. `.vdb`. */
  extension: string;
  /** Extra writer config for every case (e.g. small split sizes for split formats). */
  config?: Partial<WriterConfig>;
}

/**
 * The behaviour every backend must share, run by each backend's own test file (db0's shared driver suite idea).
 * It talks to the Backend seam only, so a new format is conformant when this passes unchanged.
 */
export function runBackendConformance({ backend, extension, config = {} }: ConformanceOptions): void {
  describe(`Backend conformance: ${backend.name} ${extension}`, () => {
    const dir = mkdtempSync(join(tmpdir(), `vlink-conf-${extension.slice(1)}-`));
    let n = 0;
    const pathFor = (name: string) => join(dir, `${name}-${n++}${extension}`);
    after(() => rmSync(dir, { recursive: true, force: true }));

    async function record(frames: Frame[], extra: Partial<WriterConfig> = {}, path = pathFor('rec')) {
      const context = createTestContext({ schemas: [SAMPLE_PROTO_SCHEMA] });
      const writer = await backend.createWriter(path, resolveWriterConfig({ ...config, ...extra }), context);
      for (const frame of frames) writeFrame(writer, frame);
      writer.close();
      writer.close(); // idempotent
      return { path, context };
    }

    async function readAll(path: string, query = {}): Promise<{ reader: BackendReader; frames: Frame[] }> {
      const reader = await backend.openReader(path, { readOnly: true, tryToFix: false });
      const frames: Frame[] = [];
      for (const f of reader.frames(query)) frames.push({ ...f, data: f.data.slice() });
      return { reader, frames };
    }

    for (const compress of ['none', 'auto'] as const) {
      test(`round-trips every frame byte-identically (compress ${compress})`, async () => {
        const input = sampleFrames();
        const { path } = await record(input, { compress });
        const { reader, frames } = await readAll(path);
        try {
          assert.equal(frames.length, input.length);
          for (let i = 0; i < input.length; i++) {
            const want = input[i]!;
            const got = frames[i]!;
            assert.equal(got.timestamp, want.timestamp, `timestamp #${i}`);
            assert.equal(got.url, want.url, `url #${i}`);
            assert.equal(got.actionType, want.actionType, `action #${i}`);
            assert.equal(got.serType, want.serType, `ser #${i}`);
            assert.equal(got.schemaType, want.schemaType, `schemaType #${i}`);
            assert.deepEqual(got.data, want.data, `data #${i}`);
          }
        } finally {
          reader.close();
        }
      });
    }

    test('stores publish times: a given one as given (earlier, later, before the start), else the log time', async () => {
      // Every third frame has none, every third one equal to its log time, the rest an earlier or later one; the
      // first one predates the recording start.
      const input = sampleFrames(90).map((f, i) => {
        if (i % 3 === 0) return f;
        if (i % 3 === 1) return { ...f, publishTime: f.timestamp };
        return { ...f, publishTime: i === 2 ? -5_000 : f.timestamp + (i % 2 === 0 ? -1_234 - i : 777 + i) };
      });
      const { path } = await record(input, { compress: 'auto' });
      const { reader, frames } = await readAll(path);
      try {
        assert.deepEqual(
          frames.map((f) => [f.url, f.timestamp, f.publishTime]),
          input.map((f) => [f.url, f.timestamp, f.publishTime ?? f.timestamp]),
        );
        // Frame objects may be reused by the next step: take the time as each one comes.
        const imu = Array.from(reader.frames({ urls: ['dds://imu'] }), (f) => f.publishTime);
        const want = input.filter((f) => f.url === 'dds://imu').map((f) => f.publishTime ?? f.timestamp);
        assert.ok(want.length > 0);
        assert.deepEqual(imu, want);
      } finally {
        reader.close();
      }
    });

    test('keys per-url state by the url id: interleaved urls read back each under its own', async () => {
      // Ids as a worker writer gives them (not dense, not in order of first use), the same in every segment.
      const ids: Record<string, number> = { 'dds://left': 41, 'dds://right': 3 };
      const input: Frame[] = Array.from({ length: 600 }, (_, i) => {
        const url = i % 3 === 0 ? 'dds://right' : 'dds://left';
        const serType = url === 'dds://left' ? 'json' : 'raw';
        const data = patternBytes(256 + (i % 7), i);
        return { timestamp: 1_000 + i * 10, url, data, serType, schemaType: SchemaType.Raw, actionType: 5 };
      });
      const path = pathFor('ids');
      const writer = await backend.createWriter(path, resolveWriterConfig(config), createTestContext());
      for (const frame of input) writer.write(frame, ids[frame.url]!);
      writer.close();
      for (const url of Object.keys(ids)) {
        const { reader, frames } = await readAll(path, { urls: [url] });
        const meta = reader.info().urls.filter((m) => m.url === url);
        reader.close();
        const want = input.filter((f) => f.url === url);
        const shape = (f: Frame) => [f.url, f.timestamp, f.serType, f.data];
        assert.deepEqual(frames.map(shape), want.map(shape), url);
        assert.equal(
          meta.reduce((sum, m) => sum + m.count, 0),
          want.length,
          `${url} count`,
        );
      }
    });

    test('info reports counts, sizes, times and the header', async () => {
      const input = sampleFrames(120);
      const { path, context } = await record(input, { compress: 'auto' });
      const reader = await backend.openReader(path, { readOnly: true });
      try {
        const info = reader.info();
        assert.equal(info.messageCount, input.length);
        assert.equal(info.startTimestamp, context.startTimestamp);
        assert.equal(info.tagName, 'Empty');
        assert.equal(info.hasCompleted, true);
        assert.equal(info.version.split('.')[0], '2');
        assert.equal(info.timeAccuracy, 'MicroSecond');
        assert.equal(info.blankDuration, Math.floor(input[0]!.timestamp / 1000));
        assert.equal(info.totalDuration, Math.floor(input.at(-1)!.timestamp / 1000));
        assert.ok(info.fileSize > 0);
        const byUrl = new Map<string, { count: number; size: number }>();
        for (const f of input) {
          const e = byUrl.get(f.url) ?? { count: 0, size: 0 };
          e.count++;
          e.size += f.data.length;
          byUrl.set(f.url, e);
        }
        const metaTotals = new Map<string, { count: number; size: number }>();
        for (const m of info.urls) {
          const e = metaTotals.get(m.url) ?? { count: 0, size: 0 };
          e.count += m.count;
          e.size += m.size;
          metaTotals.set(m.url, e);
        }
        assert.deepEqual(metaTotals, byUrl);
        assert.equal(
          info.totalRawSize,
          input.reduce((s, f) => s + f.data.length, 0),
        );
        const imu = info.urls.find((m) => m.url === 'dds://imu')!;
        assert.equal(imu.type, 'Event');
        assert.equal(imu.schemaType, SchemaType.Raw);
        assert.ok(imu.freq > 0);
        const rpc = info.urls.find((m) => m.url === 'dds://planner/method')!;
        assert.equal(rpc.type, 'Method');
        assert.equal(rpc.ser, 'pb.Req|pb.Resp');
      } finally {
        reader.close();
      }
    });

    test('filters by url and by an inclusive time window', async () => {
      const input = sampleFrames(120);
      const { path } = await record(input);
      const urls = ['dds://imu', 'dds://config/field'];
      const beginUs = input[30]!.timestamp;
      const endUs = input[90]!.timestamp;
      const { reader, frames } = await readAll(path, { urls, beginUs, endUs });
      reader.close();
      const want = input.filter((f) => urls.includes(f.url) && f.timestamp >= beginUs && f.timestamp <= endUs);
      assert.deepEqual(
        frames.map((f) => [f.timestamp, f.url]),
        want.map((f) => [f.timestamp, f.url]),
      );
      const none = await readAll(path, { urls: [] });
      none.reader.close();
      assert.equal(none.frames.length, 0);
      const unknown = await readAll(path, { urls: ['dds://nope'] });
      unknown.reader.close();
      assert.equal(unknown.frames.length, 0);
    });

    test('embeds schemas that frames need', async () => {
      const { path } = await record(sampleFrames(12));
      const reader = await backend.openReader(path, { readOnly: true });
      try {
        const schemas = reader.schemas();
        const image = schemas.find((s) => s.name === 'pb.Image');
        assert.ok(image, 'pb.Image schema stored');
        assert.equal(image.schemaType, SchemaType.Protobuf);
        assert.deepEqual(image.data, SAMPLE_PROTO_SCHEMA.data);
        assert.equal(reader.info().hasSchema, true);
      } finally {
        reader.close();
      }
    });

    test('rejects a frame whose ser conflicts with the url and keeps earlier frames', async () => {
      const path = pathFor('conflict');
      const writer = await backend.createWriter(path, resolveWriterConfig(config), createTestContext());
      const first: Frame = {
        timestamp: 10,
        url: 'dds://a',
        data: patternBytes(20, 1),
        serType: 'json',
        schemaType: SchemaType.Raw,
        actionType: 5,
      };
      writeFrame(writer, first);
      assert.throws(
        () => writeFrame(writer, { ...first, timestamp: 20, serType: 'other.Type' }),
        (e: unknown) => BagError.isInstance(e) && e.code === 'SCHEMA_CONFLICT',
      );
      writeFrame(writer, { ...first, timestamp: 30 });
      writer.close();
      const { reader, frames } = await readAll(path);
      reader.close();
      assert.deepEqual(
        frames.map((f) => f.timestamp),
        [10, 30],
      );
    });

    // UTF-8 stores a lone surrogate as U+FFFD: the frames were stored under another url, and a split recording whose
    // manifest (JSON) and segments then named the url differently did not open.
    test('refuses a url or ser that is not well-formed Unicode (INVALID_ARGUMENT) and keeps the frames around it', async () => {
      const path = pathFor('surrogate');
      const writer = await backend.createWriter(path, resolveWriterConfig(config), createTestContext());
      const frame: Frame = {
        timestamp: 10,
        url: 'dds://a',
        data: patternBytes(8, 1),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: 5,
      };
      writeFrame(writer, frame);
      for (const wrong of [
        { url: 'dds://\ud800' },
        { url: 'dds://b\udc00x' },
        { url: 'dds://c', serType: 'pb.\ud83d' },
      ])
        assert.throws(
          () => writeFrame(writer, { ...frame, timestamp: 20, ...wrong }),
          (e: unknown) =>
            BagError.isInstance(e) && e.code === 'INVALID_ARGUMENT' && /well-formed Unicode/.test(e.message),
        );
      writeFrame(writer, { ...frame, timestamp: 30, url: 'dds://😀' });
      writer.close();
      const { reader, frames } = await readAll(path);
      reader.close();
      assert.deepEqual(
        frames.map((f) => [f.url, f.timestamp]),
        [
          ['dds://a', 10],
          ['dds://😀', 30],
        ],
      );
    });

    test('stores loss ratios', async () => {
      const path = pathFor('loss');
      const writer = await backend.createWriter(path, resolveWriterConfig(config), createTestContext());
      writeFrame(writer, {
        timestamp: 1,
        url: 'dds://a',
        data: new Uint8Array(4),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: 5,
      });
      writeFrame(writer, {
        timestamp: 2,
        url: 'dds://b',
        data: new Uint8Array(4),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: 5,
      });
      writer.setUrlLoss('dds://a', 0.25);
      writer.setUrlLoss('dds://b', 7);
      writer.close();
      const reader = await backend.openReader(path, { readOnly: true });
      const metas = reader.info().urls;
      reader.close();
      assert.equal(metas.find((m) => m.url === 'dds://a')!.loss, 0.25);
      assert.equal(metas.find((m) => m.url === 'dds://b')!.loss, -1);
    });

    test('missing and garbage files fail with typed errors', async () => {
      await assert.rejects(
        backend.openReader(join(dir, `missing${extension}`), { readOnly: true }),
        (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND',
      );
      const garbage = join(dir, `garbage${extension}`);
      writeFileSync(garbage, patternBytes(4096, 7));
      await assert.rejects(backend.openReader(garbage, { readOnly: true }), (e: unknown) => BagError.isInstance(e));
    });

    test('a full verify reports progress: done grows monotonically to total; quick reports none', async () => {
      const { path } = await record(sampleFrames(2400));
      const reader = await backend.openReader(path, { readOnly: true });
      try {
        if (!reader.verify) return; // a backend without the full check has nothing to report
        const seen: MaintenanceProgress[] = [];
        const report = await reader.verify({ onProgress: (p) => seen.push({ ...p }) });
        assert.equal(report.ok, true);
        assert.equal(report.frames, 2400);
        assertProgressRun(seen);
        const quickSeen: MaintenanceProgress[] = [];
        await reader.verify({ quick: true, onProgress: (p) => quickSeen.push(p) });
        assert.deepEqual(quickSeen, []);
      } finally {
        reader.close();
      }
    });

    test('a reindex reports progress to its end and keeps every frame', async () => {
      const input = sampleFrames(2400);
      const { path } = await record(input);
      const reader = await backend.openReader(path, { readOnly: false });
      try {
        if (!reader.reindex) return; // a backend without the verb has nothing to report
        const seen: MaintenanceProgress[] = [];
        assert.equal(await reader.reindex({ onProgress: (p) => seen.push({ ...p }) }), true);
        assertProgressRun(seen);
      } finally {
        reader.close();
      }
      const { reader: after, frames } = await readAll(path);
      after.close();
      assert.equal(frames.length, input.length);
      for (let i = 0; i < input.length; i += 97) assert.deepEqual(frames[i]!.data, input[i]!.data, `frame ${i}`);
    });

    test('an existing file is replaced by a new recording', async () => {
      const path = pathFor('replace');
      await record(sampleFrames(20), {}, path);
      await record(sampleFrames(5), {}, path);
      const { reader, frames } = await readAll(path);
      reader.close();
      assert.equal(frames.length, 5);
    });
  });
}

/** A maintenance run's reports: one unit and total, `done` monotonic up to `total`, at least one report on the way. */
function assertProgressRun(seen: readonly MaintenanceProgress[]): void {
  assert.ok(seen.length >= 2, `${seen.length} progress reports`);
  const { total, unit } = seen[0]!;
  assert.ok(total > 0);
  let last = 0;
  for (const p of seen) {
    assert.equal(p.total, total, 'total stays the same');
    assert.equal(p.unit, unit, 'unit stays the same');
    assert.ok(p.done >= last && p.done <= total, `done ${p.done} after ${last} of ${total}`);
    last = p.done;
  }
  assert.equal(last, total);
  assert.ok(
    seen.some((p) => p.done > 0 && p.done < total),
    'reports on the way, not only at the end',
  );
}
