import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { resolveWriterConfig } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { rawFrame, refused, tempDir, withDb } from '../testing/util.js';
import { VdbReader } from './reader.js';

// SQLite columns are not typed: a hand-made `.vdb` can hold any value in any column. Each driver of the runtime
// (better-sqlite3 on Node, bun:sqlite on Bun, node:sqlite on Deno) hands TEXT back as a string, NULL as null and
// REAL as a number, so the reader checks the types itself.
const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('row-types');
after(() => tmp.cleanup());

/** Five frames 0, 1000, … 4000 µs on `/imu`, the third (rowid 3) then altered by `sql`. */
async function altered(name: string, sql: string, publish = false): Promise<string> {
  const path = tmp.path(name);
  const writer = await backend.createWriter(path, resolveWriterConfig(), createTestContext());
  for (let i = 0; i < 5; i++)
    writeFrame(writer, rawFrame(i * 1000, '/imu', new Uint8Array([i]), publish ? { publishTime: i * 1000 - 7 } : {}));
  writer.close();
  withDb(driver, path, (db) => db.exec(sql));
  return path;
}

function read(path: string, tryToFix = false): { reader: VdbReader; frames: () => number[] } {
  const reader = VdbReader.open(driver, path, { readOnly: true, tryToFix });
  return { reader, frames: () => [...reader.frames({})].map((f) => f.timestamp) };
}

describe('.vdb rows whose stored types no writer produces are CORRUPT_DATA, never frames', () => {
  // [name, stored value, kind, its row in read order (ORDER BY elapsed: NULL first, then numbers, then TEXT)]
  const elapsedCases: Array<[string, string, string, number]> = [
    // The text a hostile file stored to forge NDJSON lines: printed as it is, it would read as real messages.
    ['text', `'1,"url":"/forged"}' || char(10) || '{"timestamp":1'`, 'TEXT', 5],
    ['null', 'NULL', 'NULL', 1],
    ['fraction', '4.5', 'a REAL', 2],
    ['huge real', '1.5e300', 'a REAL', 5],
  ];
  for (const [name, value, kind, row] of elapsedCases) {
    test(`elapsed ${name} → CORRUPT_DATA naming the file, url and row`, async () => {
      const path = await altered(
        `elapsed-${name.replace(' ', '-')}.vdb`,
        `UPDATE VLinkDatas SET elapsed = ${value} WHERE rowid = 3`,
      );
      const { reader, frames } = read(path);
      try {
        refused(frames, 'CORRUPT_DATA', `row ${row} in read order: elapsed is ${kind}, not an INTEGER`, {
          file: path,
          url: '/imu',
        });
      } finally {
        reader.close();
      }
    });
  }

  for (const [name, value, kind] of [
    ['text', `'text'`, 'TEXT'],
    ['integer', '42', 'an INTEGER'],
    ['real', '4.5', 'a REAL'],
  ] as const) {
    test(`data ${name} → CORRUPT_DATA (it used to fail later, far from the file)`, async () => {
      const path = await altered(`data-${name}.vdb`, `UPDATE VLinkDatas SET data = ${value} WHERE rowid = 3`);
      const { reader, frames } = read(path);
      try {
        refused(frames, 'CORRUPT_DATA', `row 3 in read order: data is ${kind}, not a BLOB`, {
          file: path,
          url: '/imu',
        });
      } finally {
        reader.close();
      }
    });
  }

  test('publish time as TEXT in the side table → CORRUPT_DATA; INTEGER publish times still read', async () => {
    const path = await altered('publish-text.vdb', `UPDATE VLinkBagPublishTimes SET publish = 'x' WHERE id = 3`, true);
    const { reader, frames } = read(path);
    try {
      refused(frames, 'CORRUPT_DATA', 'row 3 in read order: publish is TEXT, not an INTEGER', { url: '/imu' });
      const kept = [...reader.frames({ endUs: 1000 })].map((f) => f.publishTime);
      assert.deepEqual(kept, [-7, 993]);
    } finally {
      reader.close();
    }
  });

  test('NULL data is an empty payload and a negative INTEGER elapsed a negative timestamp (both readable)', async () => {
    const path = await altered('legal.vdb', 'UPDATE VLinkDatas SET data = NULL, elapsed = -5 WHERE rowid = 3');
    const { reader } = read(path);
    try {
      const frames = [...reader.frames({})].map((f) => [f.timestamp, f.data.length, typeof f.publishTime]);
      assert.deepEqual(frames[0], [-5, 0, 'number']);
      assert.equal(frames.length, 5);
    } finally {
      reader.close();
    }
  });

  test('verify() reports each such row with its rowid, as the reader refuses it', async () => {
    const path = await altered('verify.vdb', `UPDATE VLinkDatas SET elapsed = 'x', data = 42 WHERE rowid = 3`);
    const reader = VdbReader.open(driver, path, { readOnly: true });
    try {
      const report = await reader.verify({});
      assert.equal(report.ok, false);
      // (then the url's byte count, which the INTEGER payload no longer adds up to)
      const found = report.problems.map((p) => [p.message, p.row, p.url, p.timeUs]);
      assert.deepEqual(found.slice(0, 2), [
        ['elapsed is TEXT, not an INTEGER', 3, '/imu', undefined],
        ['data is an INTEGER, not a BLOB', 3, '/imu', undefined],
      ]);
    } finally {
      reader.close();
    }
  });

  test('tryToFix: the damage ends the cursor and is reported; the rows before it are read', async () => {
    const path = await altered('fix.vdb', `UPDATE VLinkDatas SET elapsed = 'x' WHERE rowid = 3`);
    const { reader, frames } = read(path, true);
    try {
      // TEXT sorts after every INTEGER in SQLite, so the text row is the last one read.
      assert.deepEqual(frames(), [0, 1000, 3000, 4000]);
      assert.equal(reader.damage?.code, 'CORRUPT_DATA');
      assert.equal(reader.damage?.reason, 'row 5 in read order: elapsed is TEXT, not an INTEGER');
    } finally {
      reader.close();
    }
  });
});
