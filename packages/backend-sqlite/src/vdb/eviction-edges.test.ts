import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  CompressType,
  resolveWriterConfig,
  SchemaType,
  type Frame,
  type WriterConfig,
} from '@vlink/bag-core';
import { compressFrame } from '@vlink/bag-core/internal';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { loadDriver } from '../driver/driver.js';
import { pattern, tempDir, withDb } from '../testing/util.js';
import { VdbFileWriter } from './file-writer.js';
import { recordFrames } from './open-writer.test.helper.js';
import { VdbRecording } from './recording.js';

// Eviction (enableLimit, format reference §2.8) at its edges: a file back exactly at its byte limit, the first row
// of a url evicted while the same time follows, rows whose action does not count for the frequency. Checked on the
// finished file's VLinkDatas and VLinkUrls rows. Mutation testing (group vdb) found these unpinned.
const driver = await loadDriver();
const tmp = tempDir('vdb-eviction');
after(() => tmp.cleanup());

function frame(timestamp: number, url: string, size = 10, actionType = ActionType.Publish): Frame {
  return { timestamp, url, data: pattern(size, timestamp), serType: 'raw', schemaType: SchemaType.Raw, actionType };
}

const record = (config: Partial<WriterConfig>, frames: Frame[]) =>
  recordFrames(driver, tmp, frames, { enableLimit: true, ...config });

const query = (path: string, sql: string) =>
  withDb(driver, path, (db) => db.prepare(sql).all(), true).map((r) => Object.values(r));

describe('.vdb writer: eviction edges', () => {
  test('rows are evicted until the bytes are back at the limit, not below it', () => {
    // 10 bytes a row, limit 30: the 5th frame finds 40 > 30 and evicts one row (30 is within the limit).
    const { path } = record(
      { maxBytesSize: 30 },
      [1, 2, 3, 4, 5].map((t) => frame(t, 'dds://a')),
    );
    assert.deepEqual(query(path, 'SELECT elapsed FROM VLinkDatas ORDER BY rowid'), [[2], [3], [4], [5]]);
    assert.deepEqual(query(path, 'SELECT count, size FROM VLinkUrls'), [[4, 40]]);
  });

  test('short frame-shaped rows: 13 bytes count their original size in and out, 12 bytes their length', () => {
    // Both magics around a header size of 99: at 13 bytes that is a frame (stored as is, below the compression
    // threshold); at 12 bytes it is too short to be one, whatever its first 8 and last 4 bytes look like.
    const real = compressFrame(pattern(500), 3)!;
    const shaped = (body: number) =>
      Uint8Array.of(...real.subarray(0, 4), 0, 0, 0, 99, ...new Uint8Array(body), ...real.subarray(-4));
    const rows = [shaped(1), shaped(0), frame(3, 'dds://a').data, frame(4, 'dds://a').data];
    const path = tmp.path('short.vdb');
    const resolved = resolveWriterConfig({ enableLimit: true, maxRowCount: 1, compress: CompressType.Lzav });
    const recording = new VdbRecording(resolved);
    const writer = VdbFileWriter.open(driver, path, resolved, createTestContext(), recording);
    const sizes: number[] = [];
    rows.forEach((data, i) => {
      writeFrame(writer, { ...frame(i + 1, 'dds://a'), data });
      sizes.push(writer.bytes);
    });
    writer.close();
    // 99; 99 + 12; the 13-byte row evicted (−99) + 10; the 12-byte row evicted (−12) + 10.
    assert.deepEqual(sizes, [99, 111, 22, 20]);
    assert.deepEqual(query(path, 'SELECT count, size FROM VLinkUrls'), [[2, 20]]);
  });

  test('evicting a url’s first row keeps its last time, also when the next row has the time 0', () => {
    // a@0, a@0, a@1 s; b's frame evicts the first a@0 (max 2 rows): a keeps first 0, last 1 s, 2 rows → 2 per s.
    const { path, recording } = record({ maxRowCount: 2 }, [
      frame(0, 'dds://a'),
      frame(0, 'dds://a'),
      frame(1_000_000, 'dds://a'),
      frame(2_000_000, 'dds://b'),
    ]);
    const a = recording.urls.get('dds://a')!;
    assert.deepEqual([a.firstTs, a.lastTs, a.count], [0, 1_000_000, 2]);
    assert.deepEqual(query(path, "SELECT count, freq FROM VLinkUrls WHERE url = 'dds://a'"), [[2, 2]]);
  });

  test('evicting a row whose action does not count for the frequency gives its url no first time', () => {
    // x@0 and x@1 s are Unknown actions (no first time); y's row fills the file; x@3 s (Publish) evicts x@0. x's
    // first Publish is then its first time: first = last = 3 s, so its frequency is 0, not 2 rows over 2 s.
    const { path, recording } = record({ maxRowCount: 2 }, [
      frame(0, 'dds://x', 10, ActionType.Unknown),
      frame(1_000_000, 'dds://x', 10, ActionType.Unknown),
      frame(1_500_000, 'dds://y'),
      frame(3_000_000, 'dds://x'),
    ]);
    const x = recording.urls.get('dds://x')!;
    assert.deepEqual([x.firstTs, x.lastTs, x.count], [3_000_000, 3_000_000, 2]);
    assert.deepEqual(query(path, "SELECT count, freq FROM VLinkUrls WHERE url = 'dds://x'"), [[2, 0]]);
  });
});
