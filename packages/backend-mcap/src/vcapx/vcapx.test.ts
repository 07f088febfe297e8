import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagError,
  BagReader,
  BagWriter,
  formatVlinkDate,
  registerBackend,
  resolveWriterConfig,
  SchemaType,
  type Frame,
} from '@vlink/bag-core';
import {
  createTestContext,
  patternBytes,
  runBackendConformance,
  runSplitRecoveryConformance,
  SAMPLE_PROTO_SCHEMA,
  sampleFrames,
  writeFrame,
} from '@vlink/bag-core/testing';
import { mcapBackend } from '../backend.js';
import { loadCodecs } from '../codecs.js';
import { VcapReader } from '../vcap/vcap-reader.js';

const SPLIT = { splitBySize: 64 * 1024 };

// The shared Backend behaviour against .vcapx, with a split size small enough for several segments.
runBackendConformance({ backend: mcapBackend, extension: '.vcapx', config: SPLIT });
runSplitRecoveryConformance({ backend: mcapBackend, extension: '.vcapx' });
runBackendConformance({
  backend: mcapBackend,
  extension: '.vcapx',
  config: { ...SPLIT, splitNameByTime: true, cacheSize: 4096 },
});

registerBackend(mcapBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-vcapx-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const codecs = await loadCodecs();

async function record(
  path: string,
  frames: Frame[],
  config = {},
  context = createTestContext({ schemas: [SAMPLE_PROTO_SCHEMA] }),
) {
  const writer = await mcapBackend.createWriter(path, resolveWriterConfig({ ...SPLIT, ...config }), context);
  for (const frame of frames) writeFrame(writer, frame);
  writer.close();
  return context;
}
const manifestOf = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const isCode = (code: string) => (e: unknown) => BagError.isInstance(e) && e.code === code;

describe('.vcapx writer', () => {
  test('the sample really splits; one manifest entry per (url, action) with a global index', async () => {
    const path = join(dir, 'split.vcapx');
    const input = sampleFrames();
    const context = await record(path, input, { compress: 'zstd' });
    const m = manifestOf(path);
    const files: string[] = m.VLinkFiles;
    assert.ok(files.length >= 3, `expected several segments, got ${files.length}`);
    assert.deepEqual(
      files,
      files.map((_, i) => `split.${i + 1}.vcap`),
    );
    assert.equal(m.VLinkHeader.compress, 'zstd');
    assert.equal(m.VLinkHeader.complete, true);
    assert.equal(m.VLinkHeader.count, input.length);
    // Pairs in order of first appearance; the RPC url and the field url appear once per action.
    const pairs = [...new Map(input.map((f) => [`${f.url} ${f.actionType}`, f])).values()];
    assert.deepEqual(
      m.VLinkUrls.map((u: { index: number; url: string; action: string }) => [u.index, u.url, u.action]),
      pairs.map((f, i) => [
        i,
        f.url,
        ['Unknown', 'C/Req', 'C/Resp', 'S/Req', 'S/Resp', 'Pub', 'Sub', 'Set', 'Get'][f.actionType],
      ]),
    );
    assert.deepEqual(Object.keys(m.VLinkUrls[0]), [
      'index',
      'url',
      'type',
      'action',
      'ser',
      'encoding',
      'count',
      'size',
      'loss',
      'freq',
    ]);
    const rpc = m.VLinkUrls.filter((u: { url: string }) => u.url === 'dds://planner/method');
    assert.deepEqual(
      rpc.map((u: { type: string; ser: string }) => [u.type, u.ser]),
      [
        ['Method', 'pb.Req|pb.Resp'],
        ['Method', 'pb.Req|pb.Resp'],
      ],
    );
    let total = 0;
    for (const [i, file] of files.entries()) {
      const segment = await VcapReader.open(join(dir, file), { readOnly: true }, codecs);
      try {
        const info = segment.info();
        assert.equal(info.hasCompleted, true);
        assert.equal(info.startTimestamp, context.startTimestamp);
        const first = segment.frames({}).next().value as Frame;
        assert.equal(
          info.dateTime,
          formatVlinkDate(context.startTimestamp + (i === 0 ? 0 : Math.trunc(first.timestamp / 1000))),
        );
        // Channel records stay per file (index = channel id − 1, format reference §5.4); their pairs are the manifest's.
        for (const u of info.urls) {
          assert.ok(m.VLinkUrls.some((g: { url: string; action: string }) => g.url === u.url && g.action === u.action));
        }
        total += info.messageCount;
      } finally {
        segment.close();
      }
    }
    assert.equal(total, input.length);
  });

  test('a pair keeps its ser across segments; a conflicting ser in a later segment is rejected', async () => {
    const path = join(dir, 'ser.vcapx');
    const writer = await mcapBackend.createWriter(path, resolveWriterConfig({ splitBySize: 50 }), createTestContext());
    const f = (timestamp: number, serType: string, size = 40): Frame => ({
      timestamp,
      url: 'dds://a',
      data: patternBytes(size, timestamp),
      serType,
      schemaType: SchemaType.Unknown,
      actionType: ActionType.Publish,
    });
    writeFrame(writer, f(1, 'json'));
    writeFrame(writer, f(2, '')); // new segment: its channel still names "json"
    assert.throws(() => writeFrame(writer, f(3, 'other', 5)), isCode('SCHEMA_CONFLICT'));
    writer.close();
    const m = manifestOf(path);
    assert.deepEqual(m.VLinkFiles, ['ser.1.vcap', 'ser.2.vcap']);
    assert.equal(m.VLinkUrls[0].ser, 'json');
    assert.equal(m.VLinkUrls[0].encoding, 'raw');
    const second = await VcapReader.open(join(dir, 'ser.2.vcap'), { readOnly: true }, codecs);
    assert.equal(second.info().urls[0]!.ser, 'json');
    second.close();
  });

  test('actions outside the enum are one Unknown pair, checked like any other', async () => {
    const path = join(dir, 'actions.vcapx');
    const writer = await mcapBackend.createWriter(path, resolveWriterConfig(SPLIT), createTestContext());
    const f = (timestamp: number, actionType: number, serType = 'json'): Frame => ({
      timestamp,
      url: 'dds://a',
      data: patternBytes(8, timestamp),
      serType,
      schemaType: SchemaType.Unknown,
      actionType: actionType as ActionType,
    });
    writeFrame(writer, f(1, 42));
    writeFrame(writer, f(2, ActionType.Unknown));
    writeFrame(writer, f(3, -1));
    writeFrame(writer, f(4, 1.5));
    writeFrame(writer, f(5, ActionType.Publish));
    assert.throws(() => writeFrame(writer, f(6, 42, 'other')), isCode('SCHEMA_CONFLICT'));
    writer.close();
    const m = manifestOf(path);
    assert.deepEqual(
      m.VLinkUrls.map((u: { index: number; action: string; ser: string }) => [u.index, u.action, u.ser]),
      [
        [0, 'Unknown', 'json'],
        [1, 'Pub', 'json'],
      ],
    );
    assert.equal(m.VLinkHeader.count, 5);
  });

  test('maxSplitCount and by-time names; re-creating removes the old segments', async () => {
    const path = join(dir, 'keep.vcapx');
    const frames: Frame[] = Array.from({ length: 12 }, (_, i) => ({
      timestamp: i * 1_000_000,
      url: 'dds://a',
      data: patternBytes(10, i),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    }));
    await record(path, frames, { splitByTime: 2000, maxSplitCount: 2 });
    const first: string[] = manifestOf(path).VLinkFiles;
    assert.deepEqual(first, ['keep.5.vcap', 'keep.6.vcap']);
    assert.deepEqual(
      readdirSync(dir)
        .filter((f) => f.startsWith('keep.') && f.endsWith('.vcap'))
        .sort(),
      ['keep.5.vcap', 'keep.6.vcap'],
    );
    const m = manifestOf(path);
    // Boundaries at 2, 4, 6, 8, 10 s split at the frames of 3, 5, 7, 9 and 11 s: kept are [9 s, 10 s] and [11 s].
    assert.equal(m.VLinkHeader.count, 3);
    assert.equal(m.VLinkHeader.duration, 11_000_000);
    assert.equal(m.VLinkHeader.split_by_size, 0);
    assert.equal(m.VLinkUrls[0].count, 3);
    assert.equal(m.VLinkUrls[0].freq, 1.5);
    await record(path, frames.slice(0, 2), { splitNameByTime: true });
    for (const f of first) assert.equal(existsSync(join(dir, f)), false);
    assert.equal(manifestOf(path).VLinkFiles.length, 1);
  });
});

describe('.vcapx reader', () => {
  const path = join(dir, 'read.vcapx');
  const input = sampleFrames();
  const ready = record(path, input);

  test('windows across segments, filters by url, tag rewrites the manifest', async () => {
    await ready;
    const reader = await BagReader.create(path);
    try {
      const info = reader.getInfo();
      assert.equal(info.format, 'vcapx');
      assert.equal(info.storageType, 'vcap');
      assert.ok(info.splitCount >= 3);
      reader.openCursor({ beginTime: 800, endTime: 1900, filterUrls: ['dds://planner/method'] });
      const got: Array<[number, ActionType]> = [];
      for (let f = reader.next(); f; f = reader.next()) got.push([f.timestamp, f.actionType]);
      assert.deepEqual(
        got,
        input
          .filter((f) => f.url === 'dds://planner/method' && f.timestamp >= 800_000 && f.timestamp <= 1_900_000)
          .map((f) => [f.timestamp, f.actionType]),
      );
    } finally {
      reader.close();
    }
    assert.equal(await mcapBackend.tag!(path, 'night'), true);
    const again = await mcapBackend.openReader(path, { readOnly: true });
    assert.equal(again.info().tagName, 'night');
    again.close();
  });

  test('bad manifests fail with typed errors', async () => {
    await ready;
    const good = readFileSync(path, 'utf8');
    const bad = join(dir, 'bad.vcapx');
    const open = (text: string) => {
      writeFileSync(bad, text);
      return mcapBackend.openReader(bad, { readOnly: true });
    };
    await assert.rejects(
      open(good.replace('read.2.vcap', 'read.99.vcap')),
      (e: unknown) => isCode('NOT_FOUND')(e) && (e as BagError).file === join(dir, 'read.99.vcap'),
    );
    await assert.rejects(open(good.replace('"read.2.vcap"', '"/etc/hostname"')), isCode('CORRUPT_FILE'));
    await assert.rejects(open(good.replace('"read.2.vcap"', '"../read.2.vcap"')), isCode('CORRUPT_FILE'));
    await assert.rejects(open('{"VLinkHeader": '), isCode('CORRUPT_FILE'));
    writeFileSync(join(dir, 'junk.vcap'), patternBytes(3000, 1));
    await assert.rejects(
      open(good.replace('"read.2.vcap"', '"junk.vcap"')),
      (e: unknown) => isCode('CORRUPT_FILE')(e) && (e as BagError).file === join(dir, 'junk.vcap'),
    );
  });
});

describe('.vcapx through BagWriter', () => {
  for (const syncMode of [true, false]) {
    test(`split callbacks and frames (syncMode ${syncMode})`, async () => {
      const path = join(dir, `bw-${syncMode}.vcapx`);
      const writer = await BagWriter.create(path, { syncMode, splitBySize: 4096 });
      assert.equal(writer.mode, syncMode ? 'sync' : 'worker');
      const calls: string[] = [];
      writer.registerSplitCallback((i, f) => calls.push(`before ${i} ${f}`), true);
      writer.registerSplitCallback((i, f) => calls.push(`after ${i} ${f}`));
      for (let i = 0; i < 60; i++) {
        writer.push({
          timestamp: i * 1000,
          url: `dds://u${i % 2}`,
          data: patternBytes(700, i),
          serType: 'raw',
          schemaType: SchemaType.Raw,
          actionType: i % 4 < 2 ? ActionType.Publish : ActionType.Subscribe,
        });
      }
      await writer.close();
      const files: string[] = manifestOf(path).VLinkFiles;
      assert.ok(files.length > 5);
      const expected = [`after 0 ${join(dir, files[0]!)}`];
      for (let i = 1; i < files.length; i++)
        expected.push(`before ${i} ${join(dir, files[i]!)}`, `after ${i} ${join(dir, files[i]!)}`);
      assert.deepEqual(calls, expected);
      const reader = await BagReader.create(path);
      try {
        let n = 0;
        for await (const f of reader.frames()) {
          assert.deepEqual(f.data, patternBytes(700, n));
          assert.equal(f.actionType, n % 4 < 2 ? ActionType.Publish : ActionType.Subscribe);
          n++;
        }
        assert.equal(n, 60);
        assert.equal(reader.getInfo().urls.length, 4);
      } finally {
        reader.close();
      }
    });
  }
});
