import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagError,
  CompressType,
  resolveWriterConfig,
  SchemaType,
  type WriterConfig,
} from '@vlink/bag-core';
import { compressFrame } from '@vlink/bag-core/internal';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { noise, pattern, spyDriver, tempDir, withDb, rawFrame as frame, refused } from '../testing/util.js';
import { createDecider } from './compression.js';
import { type OpenWriterOptions, openWriter } from './open-writer.test.helper.js';
import { frequency, VdbRecording } from './recording.js';
import * as SQL from './sql.js';
import { writeFrame } from '@vlink/bag-core/testing';

// What each refusal of the .vdb writer and reader says (code, message, file, url), the edges of the writer's
// bookkeeping (first timestamps of 0, limits reached exactly, counters of evicted rows) and the adaptive clock
// stride. Mutation testing (group vdb) found these unpinned.
const driver = await loadDriver();
const tmp = tempDir('vdb-details');
after(() => tmp.cleanup());

/** A writer on a new file (`d`: another driver). */
const open = (config: Partial<WriterConfig> = {}, options: OpenWriterOptions & { d?: typeof driver } = {}) =>
  openWriter(options.d ?? driver, tmp, config, options);

const query = (path: string, sql: string): SqlRow[] => withDb(driver, path, (db) => db.prepare(sql).all(), true);

describe('.vdb writer: refusals', () => {
  test('closed writer, empty url, an uncreatable file', () => {
    const { path, writer } = open();
    refused(() => writeFrame(writer, frame(1, '', pattern(4))), 'INVALID_ARGUMENT', 'frame url must not be empty', {
      file: path,
    });
    writer.close();
    refused(() => writeFrame(writer, frame(1, 'dds://a', pattern(4))), 'CLOSED', 'write after close', { file: path });
    const schema = { name: 'pb.X', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: pattern(8) };
    refused(() => writer.writeSchema(schema), 'CLOSED', 'writeSchema after close', { file: path });
    const blocker = tmp.path('not-a-dir');
    writeFileSync(blocker, 'x');
    refused(() => open({}, { path: `${blocker}/sub/x.vdb` }), 'IO_ERROR', 'cannot create .vdb file', {
      file: `${blocker}/sub/x.vdb`,
    });
  });

  test('stale -journal, -wal and -shm files of an earlier recording are removed before the new file is created', () => {
    const path = tmp.path('stale.vdb');
    for (const suffix of ['', '-journal', '-wal', '-shm']) writeFileSync(path + suffix, 'junk from a crashed run');
    const { writer } = open({}, { path });
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    writer.close();
    assert.equal(query(path, 'SELECT count(*) AS n FROM VLinkDatas')[0]!['n'], 1);
    for (const suffix of ['-journal', '-wal', '-shm']) assert.equal(existsSync(path + suffix), false, suffix);
  });

  test('conflicting ser or schema family: the message names both, by label or number', () => {
    const { path, writer } = open();
    writeFrame(writer, frame(1, 'dds://a', pattern(4), { serType: 'pb.A', schemaType: SchemaType.Protobuf }));
    refused(
      () => writeFrame(writer, frame(2, 'dds://a', pattern(4), { serType: 'pb.B', schemaType: SchemaType.Protobuf })),
      'SCHEMA_CONFLICT',
      'ser type "pb.B" conflicts with the recorded "pb.A"',
      { file: path, url: 'dds://a' },
    );
    refused(
      () => writeFrame(writer, frame(3, 'dds://a', pattern(4), { serType: 'pb.A', schemaType: SchemaType.Cdr })),
      'SCHEMA_CONFLICT',
      'schema type cdr conflicts with the recorded protobuf',
      { file: path, url: 'dds://a' },
    );
    writer.close();
  });

  test('the file limit: reached exactly is allowed, one byte or row over rejects the next frame', () => {
    const { path, writer } = open({ maxBytesSize: 100 });
    writeFrame(writer, frame(1, 'dds://a', pattern(60)));
    writeFrame(writer, frame(2, 'dds://a', pattern(40))); // exactly 100
    writeFrame(writer, frame(3, 'dds://a', pattern(1))); // 101: allowed, the check runs before the insert
    refused(
      () => writeFrame(writer, frame(4, 'dds://b', pattern(1))),
      'LIMIT_REACHED',
      'file limit reached (rows 3 > 5000000000 or bytes 101 > 100); frame rejected',
      { file: path, url: 'dds://b' },
    );
    writer.close();
  });

  test('a failed statement names what failed and rolls back (url row, schema row, metadata, eviction, close)', () => {
    let failOn = '';
    const { driver: spy } = spyDriver(driver, (sql) => sql === failOn);
    const { path, writer } = open({ maxRowCount: 1, enableLimit: true }, { d: spy });
    failOn = SQL.INSERT_URL;
    refused(
      () => writeFrame(writer, frame(1, 'dds://a', pattern(4))),
      'IO_ERROR',
      'cannot register url; the uncommitted batch was rolled back',
      { file: path, url: 'dds://a' },
    );
    failOn = SQL.INSERT_SCHEMA;
    const schema = { name: 'pb.X', encoding: 'protobuf', schemaType: SchemaType.Protobuf, data: pattern(8) };
    refused(
      () => writer.writeSchema(schema),
      'IO_ERROR',
      'cannot insert schema pb.X; the uncommitted batch was rolled back',
    );
    failOn = '';
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    writeFrame(writer, frame(2, 'dds://a', pattern(4)));
    failOn = SQL.DELETE_ROW;
    refused(
      () => writeFrame(writer, frame(3, 'dds://a', pattern(4))),
      'IO_ERROR',
      'cannot evict old rows; the uncommitted batch was rolled back',
      { url: 'dds://a' },
    );
    failOn = SQL.UPDATE_HEADER_COUNT;
    assert.throws(
      () => writer.close(),
      (e: unknown) => BagError.isInstance(e) && e.code === 'IO_ERROR' && e.reason === 'cannot close .vdb file cleanly',
    );
  });

  test('a failed metadata refresh names it', () => {
    let clock = 0;
    let fail = false;
    const { driver: spy } = spyDriver(driver, (sql) => fail && sql === SQL.UPDATE_URL_COUNT);
    const { writer } = open({}, { d: spy, now: () => clock });
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    fail = true;
    clock = 5000;
    refused(
      () => {
        for (let i = 2; i < 10; i++) writeFrame(writer, frame(i, 'dds://a', pattern(4)));
      },
      'IO_ERROR',
      'cannot refresh metadata; the uncommitted batch was rolled back',
      { url: 'dds://a' },
    );
    fail = false;
    writer.close();
  });
});

describe('.vdb writer: bookkeeping edges', () => {
  test('a first timestamp of 0 counts for the frequency; the recording keeps the largest timestamp', () => {
    const { path, writer, recording } = open();
    writeFrame(writer, frame(0, 'dds://a', pattern(4)));
    writeFrame(writer, frame(2_000_000, 'dds://a', pattern(4)));
    writeFrame(writer, frame(1_000_000, 'dds://a', pattern(4)));
    assert.equal(recording.maxTimestamp, 2_000_000);
    assert.equal(recording.urls.get('dds://a')!.firstTs, 0);
    assert.equal(recording.urls.get('dds://a')!.lastTs, 1_000_000);
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT count, freq FROM VLinkUrls').map((r) => [r['count'], r['freq']]),
      [[3, 3]],
    );
  });

  test('an action outside 0..8 is stored as Unknown; 0 and 8 are kept', () => {
    const { path, writer } = open();
    writeFrame(writer, frame(1, 'dds://a', pattern(4), { actionType: 9 as ActionType }));
    writeFrame(writer, frame(2, 'dds://a', pattern(4), { actionType: -1 as ActionType }));
    writeFrame(writer, frame(3, 'dds://a', pattern(4), { actionType: ActionType.Get }));
    writeFrame(writer, frame(4, 'dds://b', pattern(4), { actionType: ActionType.Unknown }));
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT action FROM VLinkDatas ORDER BY rowid').map((r) => r['action']),
      ['Unknown', 'Unknown', 'Get', 'Unknown'],
    );
  });

  test('commits when more than cacheSize bytes are pending, not at exactly cacheSize', () => {
    const { driver: spy, log } = spyDriver(driver);
    const { writer } = open({ cacheSize: 100 }, { d: spy });
    const start = log.calls.length;
    writeFrame(writer, frame(1, 'dds://a', pattern(50)));
    writeFrame(writer, frame(2, 'dds://a', pattern(50)));
    assert.equal(log.calls.slice(start).includes('COMMIT;'), false);
    writeFrame(writer, frame(3, 'dds://a', pattern(1)));
    assert.equal(log.calls.at(-1), 'COMMIT;');
    writer.close();
  });

  test('tick() measures the transaction age from its BEGIN, on a clock that does not start at 0', () => {
    let clock = 50_000;
    const { driver: spy, log } = spyDriver(driver);
    const { writer } = open({}, { d: spy, now: () => clock });
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    clock = 50_100;
    writer.tick();
    assert.notEqual(log.calls.at(-1), 'COMMIT;');
    clock = 53_001;
    writer.tick();
    assert.equal(log.calls.at(-1), 'COMMIT;');
    writer.close();
  });

  test('a url known from an earlier file of the same recording keeps its id and its first timestamp', () => {
    const resolved = resolveWriterConfig({});
    const recording = new VdbRecording(resolved);
    const first = open({}, { recording });
    writeFrame(first.writer, frame(10, 'dds://a', pattern(4)));
    writeFrame(first.writer, frame(11, 'dds://b', pattern(4)));
    first.writer.close();
    const second = open({}, { recording });
    writeFrame(second.writer, frame(20, 'dds://b', pattern(4)));
    writeFrame(second.writer, frame(21, 'dds://c', pattern(4)));
    second.writer.close();
    assert.deepEqual(
      query(second.path, 'SELECT id, url FROM VLinkUrls ORDER BY id').map((r) => [r['id'], r['url']]),
      [
        [1, 'dds://b'],
        [2, 'dds://c'],
      ],
    );
    assert.equal(recording.urls.get('dds://b')!.firstTs, 11);
    assert.equal(recording.urls.get('dds://b')!.count, 2);
  });

  test('an empty ser is filled in the url row by the first frame that has one', () => {
    const { path, writer } = open();
    writeFrame(writer, frame(1, 'dds://a', pattern(4), { serType: '', schemaType: SchemaType.Unknown }));
    writeFrame(writer, frame(2, 'dds://a', pattern(4), { serType: 'pb.A', schemaType: SchemaType.Protobuf }));
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT ser, encoding FROM VLinkUrls').map((r) => [r['ser'], r['encoding']]),
      [['pb.A', 'protobuf']],
    );
  });

  test('counters are stored at close only when there are some', () => {
    const without = open();
    writeFrame(without.writer, frame(1, 'dds://a', pattern(4)));
    without.writer.setCounters({});
    without.writer.close();
    assert.equal(
      query(without.path, "SELECT count(*) AS n FROM sqlite_master WHERE name = 'VLinkBagCounters'")[0]!['n'],
      0,
    );
    const withDrops = open();
    writeFrame(withDrops.writer, frame(1, 'dds://a', pattern(4)));
    withDrops.writer.setCounters({ 'dds://a': { queue: 3, size: 1 } });
    withDrops.writer.close();
    assert.deepEqual(
      query(withDrops.path, 'SELECT * FROM VLinkBagCounters ORDER BY 1, 2').map((r) => Object.values(r)),
      [
        ['dds://a', 'queue', 3],
        ['dds://a', 'size', 1],
      ],
    );
  });

  test('close switches the journal and optimizes only when configured', () => {
    const { driver: spy, log } = spyDriver(driver);
    const { writer } = open({}, { d: spy });
    writeFrame(writer, frame(1, 'dds://a', pattern(4)));
    const start = log.calls.length;
    writer.close();
    const closing = log.calls.slice(start);
    assert.equal(closing.at(-1), 'COMMIT;');
    assert.equal(
      closing.some((c) => c.startsWith('PRAGMA')),
      false,
    );
  });
});

describe('.vdb writer: compressed rows and eviction', () => {
  test('a raw payload is accounted at its length when compression is on; a pre-framed one at its original size', () => {
    const { writer, recording } = open({ compress: CompressType.Lzav });
    writeFrame(writer, frame(1, 'dds://a', noise(100, 3)));
    assert.equal(recording.size, 100);
    const framed = compressFrame(pattern(500), 3)!;
    writeFrame(writer, frame(2, 'dds://a', framed));
    assert.equal(recording.size, 600);
    writer.close();
  });

  test('eviction subtracts what each row counted: raw length, a frame’s original size, a frame stored raw', () => {
    // Compression on: an incompressible raw row (its length), a pre-framed row (its original size).
    const on = open({ compress: CompressType.Lzav, maxRowCount: 1, enableLimit: true });
    writeFrame(on.writer, frame(1, 'dds://a', noise(100, 4)));
    writeFrame(on.writer, frame(2, 'dds://a', compressFrame(pattern(300), 3)!));
    assert.equal(on.writer.bytes, 400);
    writeFrame(on.writer, frame(3, 'dds://a', noise(7, 5))); // evicts the raw row: 400 - 100 + 7
    assert.deepEqual([on.writer.rows, on.writer.bytes, on.recording.size], [2, 307, 307]);
    writeFrame(on.writer, frame(4, 'dds://a', noise(9, 8))); // evicts the framed row: 307 - 300 + 9
    assert.deepEqual([on.writer.rows, on.writer.bytes, on.recording.size], [2, 16, 16]);
    on.writer.close();
    // Compression off: a payload that happens to be a frame counts its length, in and out.
    const off = open({ maxRowCount: 1, enableLimit: true });
    const frameBytes = compressFrame(pattern(300), 3)!;
    writeFrame(off.writer, frame(1, 'dds://a', frameBytes));
    writeFrame(off.writer, frame(2, 'dds://a', noise(5, 6)));
    writeFrame(off.writer, frame(3, 'dds://a', noise(6, 7))); // evicts the frame-shaped row at its length
    assert.deepEqual([off.writer.rows, off.writer.bytes], [2, 11]);
    off.writer.close();
  });

  test('eviction moves a url’s first timestamp to its next row, or to none', () => {
    const { writer, recording } = open({ maxRowCount: 2, enableLimit: true });
    writeFrame(writer, frame(0, 'dds://a', pattern(4)));
    writeFrame(writer, frame(5, 'dds://b', pattern(4)));
    writeFrame(writer, frame(9, 'dds://a', pattern(4)));
    writeFrame(writer, frame(12, 'dds://b', pattern(4))); // evicts a@0: a's first becomes 9
    assert.equal(recording.urls.get('dds://a')!.firstTs, 9);
    writeFrame(writer, frame(13, 'dds://b', pattern(4))); // evicts b@5: b's first becomes 12
    assert.equal(recording.urls.get('dds://b')!.firstTs, 12);
    writeFrame(writer, frame(14, 'dds://b', pattern(4))); // evicts a@9: a has no row left
    const a = recording.urls.get('dds://a')!;
    assert.deepEqual([a.firstTs, a.lastTs, a.count], [-1, -1, 0]);
    writer.close();
  });
});

describe('VdbRecording', () => {
  test('frequency: count over the first-to-last span in seconds, 0 without a positive span', () => {
    assert.equal(frequency(10, 0, 2_000_000), 5);
    assert.equal(frequency(4, 1_000_000, 3_000_000), 2);
    assert.equal(frequency(4, -1, 3_000_000), 0);
    assert.equal(frequency(4, 5, 5), 0);
  });

  test('losses above 1 or not finite are unknown (-1); 1 and below are kept', () => {
    const r = new VdbRecording(resolveWriterConfig({}));
    for (const [loss, stored] of [
      [1, 1],
      [0.25, 0.25],
      [1.5, -1],
      [Number.NaN, -1],
      [Number.POSITIVE_INFINITY, -1],
    ]) {
      r.setLoss('u', loss!);
      assert.equal(r.losses.get('u'), stored, `loss ${loss}`);
    }
  });

  test('a new url starts with no timestamps; restore forgets urls added after the snapshot, keeps the others', () => {
    const r = new VdbRecording(resolveWriterConfig({}));
    const a = r.addUrl('a', 'Topic' as never, 'raw', SchemaType.Raw);
    assert.deepEqual([a.index, a.firstTs, a.lastTs, a.count, a.size], [0, -1, -1, 0, 0]);
    a.count = 2;
    const saved = r.snapshot();
    a.count = 5;
    r.addUrl('b', 'Topic' as never, 'raw', SchemaType.Raw);
    r.restore(saved);
    assert.deepEqual([...r.urls.keys()], ['a']);
    assert.equal(r.urls.get('a')!.count, 2);
    assert.equal(r.addUrl('c', 'Topic' as never, 'raw', SchemaType.Raw).index, 1);
  });

  test('compression rules exist only when compression is on', () => {
    assert.equal(new VdbRecording(resolveWriterConfig({ compress: CompressType.None })).decider, undefined);
    assert.equal(createDecider(resolveWriterConfig({ compress: CompressType.None })), undefined);
    const decider = createDecider(resolveWriterConfig({ compress: CompressType.Auto, compressStartSize: 64 }))!;
    assert.equal(decider.startSize, 64);
  });
});
