import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, CompressType, type Frame, type WriterConfig } from '@vlink/bag-core';
import { loadDriver } from '../driver/driver.js';
import { pattern, tempDir, withDb, rawFrame as frame, refused } from '../testing/util.js';
import { type OpenWriterOptions, openWriter } from './open-writer.test.helper.js';
import { VdbReader } from './reader.js';
import { writeFrame } from '@vlink/bag-core/testing';

// The .vdb reader's refusals and options (split from vdb-details.test.ts).

// What each refusal of the .vdb writer and reader says (code, message, file, url), the edges of the writer's
// bookkeeping (first timestamps of 0, limits reached exactly, counters of evicted rows) and the adaptive clock
// stride. Mutation testing (group vdb) found these unpinned.
const driver = await loadDriver();
const tmp = tempDir('vdb-reader');
after(() => tmp.cleanup());

/** A writer on a new file (`d`: another driver). */
const open = (config: Partial<WriterConfig> = {}, options: OpenWriterOptions & { d?: typeof driver } = {}) =>
  openWriter(options.d ?? driver, tmp, config, options);

/** Keeps the frame's header, 12 body bytes and its footer: still a frame, no longer a decodable one. */
function damageRow(path: string): void {
  withDb(driver, path, (db) => {
    const row = db.prepare('SELECT data FROM VLinkDatas').get()!['data'] as Uint8Array;
    assert.deepEqual([...row.subarray(0, 4)], [0x17, 0x49, 0xb2, 0x6f]);
    const broken = Uint8Array.of(...row.subarray(0, 20), ...row.subarray(row.length - 4));
    db.prepare('UPDATE VLinkDatas SET data = ?').run(broken);
  });
}

describe('.vdb reader: refusals and options', () => {
  async function recorded(frames: Frame[], config: Partial<WriterConfig> = {}): Promise<string> {
    const { path, writer } = open(config);
    for (const f of frames) writeFrame(writer, f);
    writer.close();
    return path;
  }

  test('closed reader, read-only maintenance, bounds that are not finite', async () => {
    const path = await recorded([frame(1, 'dds://a', pattern(4))]);
    const reader = VdbReader.open(driver, path);
    refused(() => reader.frames({ beginUs: Number.NaN }), 'INVALID_ARGUMENT', 'beginUs must be a finite number');
    refused(
      () => reader.frames({ endUs: Number.POSITIVE_INFINITY }),
      'INVALID_ARGUMENT',
      'endUs must be a finite number',
    );
    await assert.rejects(reader.reindex(), (e: unknown) => {
      assert.ok(BagError.isInstance(e));
      assert.equal(e.code, 'NOT_SUPPORTED');
      assert.equal(e.reason, 'reindex changes the file: open the reader with readOnly: false');
      assert.equal(e.file, path);
      return true;
    });
    await assert.rejects(reader.fix(false), (e: unknown) => {
      assert.ok(BagError.isInstance(e));
      assert.equal(e.reason, 'fix changes the file: open the reader with readOnly: false');
      return true;
    });
    reader.close();
    refused(() => reader.info(), 'CLOSED', 'reader is closed', { file: path });
  });

  test('a file that is not a .vdb is CORRUPT_FILE "cannot read .vdb file"', () => {
    const path = tmp.path('other.vdb');
    withDb(driver, path, (db) => db.exec('CREATE TABLE t(x); INSERT INTO t VALUES (1);'));
    assert.throws(
      () => VdbReader.open(driver, path),
      (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE' && e.file === path,
    );
  });

  test('a damaged compressed row: CORRUPT_DATA saying what is wrong, in which file and url; with tryToFix the cursor ends and records it', async () => {
    const path = await recorded([frame(1, 'dds://a', pattern(4000))], { compress: CompressType.Lzav });
    damageRow(path);
    const reader = VdbReader.open(driver, path);
    assert.throws(
      () => [...reader.frames()],
      (e: unknown) =>
        BagError.isInstance(e) &&
        e.code === 'CORRUPT_DATA' &&
        e.reason === 'cannot decompress a row: lzav: literals overrun the input' &&
        e.file === path &&
        e.url === 'dds://a',
    );
    reader.close();
    const fixing = VdbReader.open(driver, path, { tryToFix: true });
    assert.deepEqual([...fixing.frames()], []);
    assert.ok(BagError.isInstance(fixing.damage) && fixing.damage.code === 'CORRUPT_DATA');
    fixing.close();
  });

  test('quick verification skips decoding payloads; the full one decodes them', async () => {
    const path = await recorded([frame(1, 'dds://a', pattern(4000))], { compress: CompressType.Lzav });
    damageRow(path);
    const reader = VdbReader.open(driver, path);
    assert.equal((await reader.verify({ quick: true })).ok, true);
    assert.equal((await reader.verify({})).ok, false);
    assert.equal((await reader.verify({ quick: false })).ok, false);
    reader.close();
  });

  test('a file whose schema table is gone reads no schemas instead of failing', async () => {
    const path = await recorded([frame(1, 'dds://a', pattern(4))]);
    withDb(driver, path, (db) => db.exec('DROP TABLE VLinkSchemas;'));
    const reader = VdbReader.open(driver, path);
    assert.deepEqual(reader.schemas(), []);
    reader.close();
  });
});
