import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, resolveWriterConfig, type WriterConfig } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { loadDriver, type SqlRow } from '../driver/driver.js';
import { pattern, tempDir, withDb, rawFrame } from '../testing/util.js';
import { VdbFileWriter } from './file-writer.js';
import { type OpenWriterOptions, openWriter, PROTO, REQ, RESP } from './open-writer.test.helper.js';
import { VdbRecording } from './recording.js';

// VdbFileWriter's limits (split from file-writer.test.ts).

const driver = await loadDriver();
const tmp = tempDir('writer-limits');
after(() => tmp.cleanup());

const frame = rawFrame;
/** A writer whose context knows the three protobuf schemas (`d`: another driver). */
const open = (config: Partial<WriterConfig> = {}, options: OpenWriterOptions & { d?: typeof driver } = {}) =>
  openWriter(options.d ?? driver, tmp, config, { schemas: [PROTO, REQ, RESP], ...options });

function query(path: string, sql: string, ...params: (string | number)[]): SqlRow[] {
  return withDb(driver, path, (db) => db.prepare(sql).all(...params), true);
}

describe('VdbFileWriter: limits', () => {
  test('without enableLimit: a file exceeds maxRowCount by one, then every frame is LIMIT_REACHED', () => {
    const { path, writer } = open({ maxRowCount: 3 });
    for (let i = 0; i < 4; i++) writeFrame(writer, frame(i, 'dds://a', pattern(4)));
    for (let i = 4; i < 6; i++) {
      assert.throws(
        () => writeFrame(writer, frame(i, 'dds://a', pattern(4))),
        (e: unknown) => BagError.isInstance(e) && e.code === 'LIMIT_REACHED',
      );
    }
    writer.close();
    assert.equal(query(path, 'SELECT COUNT(*) AS n FROM VLinkDatas')[0]!['n'], 4);
    assert.equal(query(path, 'SELECT count FROM VLinkHeader')[0]!['count'], 4);
  });

  test('without enableLimit: maxBytesSize counts accounted bytes', () => {
    const { writer } = open({ maxBytesSize: 100 });
    writeFrame(writer, frame(1, 'dds://a', pattern(60)));
    writeFrame(writer, frame(2, 'dds://a', pattern(60)));
    assert.throws(
      () => writeFrame(writer, frame(3, 'dds://a', pattern(1))),
      (e: unknown) => BagError.isInstance(e) && e.code === 'LIMIT_REACHED',
    );
    writer.close();
  });

  test('with enableLimit: the oldest rows are evicted and file, url and recording counters follow exactly', () => {
    const resolved = resolveWriterConfig({ maxRowCount: 3, enableLimit: true });
    const recording = new VdbRecording(resolved);
    const path = tmp.path('evict.vdb');
    const writer = VdbFileWriter.open(driver, path, resolved, createTestContext(), recording);
    const sizes = [10, 20, 30, 40, 50, 60, 70];
    sizes.forEach((n, i) => {
      writeFrame(writer, frame(1_000_000 * (i + 1), i % 2 ? 'dds://b' : 'dds://a', pattern(n)));
    });
    // rows > 3 triggers eviction before inserting: at most 4 rows remain, the newest ones.
    assert.equal(writer.rows, 4);
    assert.equal(writer.bytes, 40 + 50 + 60 + 70);
    assert.equal(recording.count, 4);
    assert.equal(recording.size, 220);
    const a = recording.urls.get('dds://a')!;
    const b = recording.urls.get('dds://b')!;
    assert.deepEqual([a.count, a.size, a.firstTs, a.lastTs], [2, 120, 5_000_000, 7_000_000]);
    assert.deepEqual([b.count, b.size, b.firstTs, b.lastTs], [2, 100, 4_000_000, 6_000_000]);
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid').map((r) => r['elapsed']),
      [4e6, 5e6, 6e6, 7e6],
    );
    assert.deepEqual(
      query(path, 'SELECT url, count, size, freq FROM VLinkUrls ORDER BY id').map((r) => [
        r['url'],
        r['count'],
        r['size'],
        r['freq'],
      ]),
      [
        ['dds://a', 2, 120, 1],
        ['dds://b', 2, 100, 1],
      ],
    );
    assert.deepEqual(
      query(path, 'SELECT count, duration FROM VLinkHeader').map((r) => [r['count'], r['duration']]),
      [[4, 7e6]],
    );
  });

  test('with enableLimit: maxBytesSize evicts until the accounted bytes fit', () => {
    const { path, writer } = open({ maxBytesSize: 100, enableLimit: true });
    for (let i = 0; i < 6; i++) writeFrame(writer, frame(i, 'dds://a', pattern(40)));
    // before each insert: bytes > 100 → evict oldest until ≤ 100, then insert (so ≤ 140 after)
    assert.equal(writer.bytes, 120);
    writer.close();
    assert.deepEqual(
      query(path, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid').map((r) => r['elapsed']),
      [3, 4, 5],
    );
    assert.deepEqual(
      query(path, 'SELECT count, size FROM VLinkUrls').map((r) => [r['count'], r['size']]),
      [[3, 120]],
    );
  });
});
