import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagError,
  BagReader,
  BagWriter,
  formatFileTime,
  formatVlinkDate,
  registerBackend,
  resolveWriterConfig,
  SchemaType,
  type Frame,
} from '@vlink/bag-core';
import {
  createTestContext,
  runBackendConformance,
  runSplitRecoveryConformance,
  SAMPLE_PROTO_SCHEMA,
  sampleFrames,
  writeFrame,
} from '@vlink/bag-core/testing';
import { createSqliteBackend, sqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { pattern, tempDir } from '../testing/util.js';

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const SPLIT = { splitBySize: 64 * 1024 };

// The shared Backend behaviour against .vdbx, small enough a split size that the sample spans several segments.
runBackendConformance({ backend, extension: '.vdbx', config: SPLIT });
runSplitRecoveryConformance({ backend: backend, extension: '.vdbx' });

registerBackend(sqliteBackend);
const tmp = tempDir('vdbx');
after(() => tmp.cleanup());

async function record(
  path: string,
  frames: Frame[],
  config = {},
  context = createTestContext({ schemas: [SAMPLE_PROTO_SCHEMA] }),
) {
  const writer = await backend.createWriter(path, resolveWriterConfig({ ...SPLIT, ...config }), context);
  for (const frame of frames) writeFrame(writer, frame);
  writer.close();
  return context;
}

const manifestOf = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const rows = (path: string, sql: string) => {
  const db = driver.open(path, { readOnly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
};
const isCode = (code: string) => (e: unknown) => BagError.isInstance(e) && e.code === code;

describe('.vdbx writer', () => {
  test('the sample really splits; segments hold global url ids, shared start, dates at the trigger', async () => {
    const path = join(tmp.dir, 'split.vdbx');
    const input = sampleFrames();
    const context = await record(path, input);
    const m = manifestOf(path);
    const files: string[] = m.VLinkFiles;
    assert.ok(files.length >= 3, `expected several segments, got ${files.length}`);
    assert.deepEqual(
      files,
      files.map((_, i) => `split.${i + 1}.vdb`),
    );
    assert.equal(m.VLinkHeader.complete, true);
    assert.equal(m.VLinkHeader.count, input.length);
    assert.equal(m.VLinkHeader.duration, input.at(-1)!.timestamp);
    assert.equal(m.VLinkHeader.split_by_size, 64 * 1024);
    assert.equal(m.VLinkHeader.date, formatVlinkDate(context.startTimestamp));
    const indexByUrl = new Map<string, number>(
      m.VLinkUrls.map((u: { url: string; index: number }) => [u.url, u.index]),
    );
    // Global ids follow first appearance in the recording.
    assert.deepEqual([...indexByUrl.keys()], [...new Set(input.map((f) => f.url))]);
    let total = 0;
    for (const [i, file] of files.entries()) {
      const segment = join(tmp.dir, file);
      const header = rows(segment, 'SELECT count, date, complete, start_timestamp FROM VLinkHeader')[0]!;
      assert.equal(header['complete'], 1);
      assert.equal(header['start_timestamp'], context.startTimestamp);
      const first = rows(segment, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid LIMIT 1')[0]!['elapsed'] as number;
      assert.equal(header['date'], formatVlinkDate(context.startTimestamp + (i === 0 ? 0 : Math.trunc(first / 1000))));
      for (const u of rows(segment, 'SELECT id, url FROM VLinkUrls'))
        assert.equal(u['id'], indexByUrl.get(u['url'] as string));
      for (const d of rows(segment, 'SELECT DISTINCT url FROM VLinkDatas')) {
        assert.ok(rows(segment, `SELECT 1 FROM VLinkUrls WHERE id = ${d['url'] as number}`).length === 1);
      }
      total += header['count'] as number;
    }
    assert.equal(total, input.length);
    // Schemas are written again in each segment that needs them.
    const withImage = files.filter(
      (f) => rows(join(tmp.dir, f), "SELECT 1 FROM VLinkSchemas WHERE ser = 'pb.Image'").length > 0,
    );
    assert.ok(withImage.length >= 2);
  });

  test('the manifest text: dump(4), VLink key order, doubles for loss and freq, then what each segment holds', async () => {
    const path = join(tmp.dir, 'text.vdbx');
    const frames: Frame[] = [0, 1, 2, 3].map((i) => ({
      timestamp: 1000 + i * 100_000,
      url: i < 3 ? 'dds://a' : 'dds://b',
      data: pattern(40, i),
      serType: 'json',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    }));
    const context = createTestContext();
    const writer = await backend.createWriter(path, resolveWriterConfig({ splitBySize: 100 }), context);
    for (const f of frames) writeFrame(writer, f);
    writer.setUrlLoss('dds://a', 0.5);
    writer.close();
    const text = readFileSync(path, 'utf8');
    assert.equal(
      text,
      `{
    "VLinkHeader": {
        "major": 2,
        "minor": 1,
        "patch": 0,
        "count": 4,
        "duration": 301000,
        "accuracy": "MicroSecond",
        "compress": "None",
        "process": "vlink-test",
        "date": "${formatVlinkDate(context.startTimestamp)}",
        "tag": "Empty",
        "split_by_size": 100,
        "split_by_time": 0,
        "complete": true,
        "timezone": 480,
        "start_timestamp": ${context.startTimestamp}
    },
    "VLinkUrls": [
        {
            "index": 0,
            "url": "dds://a",
            "type": "Event",
            "ser": "json",
            "encoding": "raw",
            "count": 3,
            "size": 120,
            "loss": 0.5,
            "freq": 15.0
        },
        {
            "index": 1,
            "url": "dds://b",
            "type": "Event",
            "ser": "json",
            "encoding": "raw",
            "count": 1,
            "size": 40,
            "loss": 0.0,
            "freq": 0.0
        }
    ],
    "VLinkFiles": [
        "text.1.vdb",
        "text.2.vdb"
    ],
    "VLinkBagSegments": [
        {
            "file": "text.1.vdb",
            "start_timestamp": ${context.startTimestamp},
            "count": 2,
            "begin": 1000,
            "end": 101000,
            "schema": false,
            "urls": [
                {
                    "index": 0,
                    "count": 2,
                    "size": 80
                }
            ]
        },
        {
            "file": "text.2.vdb",
            "start_timestamp": ${context.startTimestamp},
            "count": 2,
            "begin": 201000,
            "end": 301000,
            "schema": false,
            "urls": [
                {
                    "index": 0,
                    "count": 1,
                    "size": 40
                },
                {
                    "index": 1,
                    "count": 1,
                    "size": 40
                }
            ]
        }
    ]
}`,
    );
    // Segments write losses at their close: the first one closed before the loss was set.
    assert.equal(rows(join(tmp.dir, 'text.1.vdb'), "SELECT loss FROM VLinkUrls WHERE url = 'dds://a'")[0]!['loss'], 0);
    assert.equal(
      rows(join(tmp.dir, 'text.2.vdb'), "SELECT loss FROM VLinkUrls WHERE url = 'dds://a'")[0]!['loss'],
      0.5,
    );
  });

  test('maxSplitCount keeps the newest segments; totals cover them only', async () => {
    const path = join(tmp.dir, 'keep.vdbx');
    const frames: Frame[] = Array.from({ length: 20 }, (_, i) => ({
      timestamp: i * 1000,
      url: i < 2 ? 'dds://early' : 'dds://late',
      data: pattern(100, i),
      serType: 'raw',
      schemaType: SchemaType.Raw,
      actionType: ActionType.Publish,
    }));
    await record(path, frames, { splitBySize: 250, maxSplitCount: 3 });
    const m = manifestOf(path);
    assert.deepEqual(m.VLinkFiles, ['keep.8.vdb', 'keep.9.vdb', 'keep.10.vdb']);
    assert.deepEqual(
      readdirSync(tmp.dir)
        .filter((f) => f.startsWith('keep.') && f.endsWith('.vdb'))
        .sort(),
      ['keep.10.vdb', 'keep.8.vdb', 'keep.9.vdb'],
    );
    assert.equal(m.VLinkHeader.count, 6);
    assert.equal(m.VLinkHeader.duration, 19_000);
    assert.deepEqual(
      m.VLinkUrls.map((u: { url: string; index: number; count: number; size: number }) => [
        u.url,
        u.index,
        u.count,
        u.size,
      ]),
      [['dds://late', 1, 6, 600]],
    );
    const reader = await BagReader.create(path);
    try {
      assert.equal(reader.getInfo().splitCount, 3);
      assert.equal(reader.getInfo().blankDuration, 14);
      const got = [];
      for await (const f of reader.frames()) got.push(f.timestamp);
      assert.deepEqual(
        got,
        [14, 15, 16, 17, 18, 19].map((s) => s * 1000),
      );
    } finally {
      reader.close();
    }
  });

  test('re-creating a recording removes the old segments (bare names only) and by-time names', async () => {
    const path = join(tmp.dir, 'again.vdbx');
    await record(path, sampleFrames(60));
    const old: string[] = manifestOf(path).VLinkFiles;
    assert.ok(old.length > 1);
    const outside = join(tmp.dir, 'outside.keep');
    writeFileSync(outside, 'x');
    const m = manifestOf(path);
    m.VLinkFiles.push('../outside.keep', 'outside.keep/..');
    writeFileSync(path, JSON.stringify(m));
    const context = await record(path, sampleFrames(8), { splitNameByTime: true, splitBySize: 1024 * 1024 * 4 });
    for (const f of old) assert.equal(existsSync(join(tmp.dir, f)), false, f);
    assert.equal(existsSync(outside), true);
    assert.deepEqual(manifestOf(path).VLinkFiles, [`${formatFileTime(context.startTimestamp)}.vdb`]);
  });
});

describe('.vdbx reader', () => {
  const path = join(tmp.dir, 'read.vdbx');
  const input = sampleFrames();
  const ready = record(path, input);

  test('cursor windows start in the right segment and bound every segment', async () => {
    await ready;
    const reader = await BagReader.create(path);
    try {
      const info = reader.getInfo();
      assert.ok(info.splitCount >= 3);
      assert.equal(info.format, 'vdbx');
      assert.equal(info.storageType, 'SQLite3');
      const sizes = manifestOf(path).VLinkFiles.reduce(
        (s: number, f: string) => s + readFileSync(join(tmp.dir, f)).length,
        0,
      );
      assert.equal(info.fileSize, sizes);
      for (const [beginTime, endTime] of [
        [500, 1500],
        [1000, 0],
        [0, 700],
        [2390, 2391],
      ] as const) {
        reader.openCursor({ beginTime, endTime, filterUrls: ['dds://imu', 'shm://lidar/点云'] });
        const got: number[] = [];
        for (let f = reader.next(); f; f = reader.next()) got.push(f.timestamp);
        const want = input
          .filter(
            (f) =>
              ['dds://imu', 'shm://lidar/点云'].includes(f.url) &&
              f.timestamp >= beginTime * 1000 &&
              (endTime === 0 || f.timestamp <= endTime * 1000),
          )
          .map((f) => f.timestamp);
        assert.deepEqual(got, want, `${beginTime}..${endTime}`);
      }
    } finally {
      reader.close();
    }
  });

  test('playback runs across segments', async () => {
    await ready;
    const reader = await BagReader.create(path);
    try {
      const got: number[] = [];
      for await (const f of reader.play({ forceDelay: 0, beginTime: 1200 })) got.push(f.timestamp);
      assert.deepEqual(
        got,
        input.filter((f) => f.timestamp >= 1_200_000).map((f) => f.timestamp),
      );
    } finally {
      reader.close();
    }
  });

  test('bad manifests fail with typed errors and never read outside the directory', async () => {
    await ready;
    const good = readFileSync(path, 'utf8');
    const bad = join(tmp.dir, 'bad.vdbx');
    const files: string[] = JSON.parse(good).VLinkFiles;
    const variant = async (mutate: (m: { VLinkFiles: string[] }) => unknown) => {
      const m = JSON.parse(good);
      mutate(m);
      writeFileSync(bad, typeof m === 'string' ? m : JSON.stringify(m));
      return backend.openReader(bad, { readOnly: true });
    };
    await assert.rejects(
      variant((m) => (m.VLinkFiles[1] = 'gone.vdb')),
      (e: unknown) => isCode('NOT_FOUND')(e) && (e as BagError).file === join(tmp.dir, 'gone.vdb'),
    );
    await assert.rejects(
      variant((m) => (m.VLinkFiles[0] = `../${files[0]}`)),
      (e: unknown) => isCode('CORRUPT_FILE')(e) && (e as Error).message.includes('VLinkFiles[0]'),
    );
    await assert.rejects(
      variant((m) => (m.VLinkFiles[0] = join(tmp.dir, files[0]!))),
      isCode('CORRUPT_FILE'),
    );
    writeFileSync(join(tmp.dir, 'not-a-db.vdb'), pattern(5000));
    await assert.rejects(
      variant((m) => m.VLinkFiles.push('not-a-db.vdb')),
      (e: unknown) => isCode('CORRUPT_FILE')(e) && (e as BagError).file === join(tmp.dir, 'not-a-db.vdb'),
    );
    const fixed = await variant((m) => m.VLinkFiles.push('not-a-db.vdb')).catch(() => undefined);
    assert.equal(fixed, undefined);
    const tolerant = await (async () => {
      const m = JSON.parse(good);
      m.VLinkFiles.push('not-a-db.vdb');
      writeFileSync(bad, JSON.stringify(m));
      return backend.openReader(bad, { readOnly: true, tryToFix: true });
    })();
    assert.equal(tolerant.info().splitCount, files.length);
    assert.equal(tolerant.info().hasCompleted, false);
    tolerant.close();
    writeFileSync(bad, good.slice(0, 100));
    await assert.rejects(backend.openReader(bad, { readOnly: true }), isCode('CORRUPT_FILE'));
  });

  test('tag rewrites every segment and the manifest', async () => {
    const tagged = join(tmp.dir, 'tag.vdbx');
    await record(tagged, sampleFrames(60));
    assert.equal(await backend.tag!(tagged, 'drive-42'), true);
    const m = manifestOf(tagged);
    assert.equal(m.VLinkHeader.tag, 'drive-42');
    assert.match(readFileSync(tagged, 'utf8'), /"freq": \d+\.\d+/);
    for (const f of m.VLinkFiles)
      assert.equal(rows(join(tmp.dir, f), 'SELECT tag FROM VLinkHeader')[0]!['tag'], 'drive-42');
    const reader = await backend.openReader(tagged, { readOnly: true });
    assert.equal(reader.info().tagName, 'drive-42');
    reader.close();
  });
});

describe('.vdbx through BagWriter', () => {
  for (const syncMode of [true, false]) {
    test(`split callbacks (VLink's sequence) and all frames (syncMode ${syncMode})`, async () => {
      const path = join(tmp.dir, `bw-${syncMode}.vdbx`);
      const writer = await BagWriter.create(path, { syncMode, splitBySize: 4096 });
      assert.equal(writer.mode, syncMode ? 'sync' : 'worker');
      const calls: string[] = [];
      writer.registerSplitCallback((i, f) => calls.push(`before ${i} ${f}`), true);
      writer.registerSplitCallback((i, f) => calls.push(`after ${i} ${f}`));
      for (let i = 0; i < 100; i++) {
        writer.push({
          timestamp: i * 1000,
          url: `dds://u${i % 3}`,
          data: pattern(500, i),
          serType: 'raw',
          schemaType: SchemaType.Raw,
          actionType: ActionType.Publish,
        });
      }
      await writer.close();
      const files: string[] = manifestOf(path).VLinkFiles;
      assert.ok(files.length > 5);
      const expected = [`after 0 ${join(tmp.dir, files[0]!)}`];
      for (let i = 1; i < files.length; i++)
        expected.push(`before ${i} ${join(tmp.dir, files[i]!)}`, `after ${i} ${join(tmp.dir, files[i]!)}`);
      assert.deepEqual(calls, expected);
      const reader = await BagReader.create(path);
      try {
        let n = 0;
        for await (const f of reader.frames()) assert.deepEqual(f.data, pattern(500, n++));
        assert.equal(n, 100);
      } finally {
        reader.close();
      }
    });
  }
});
