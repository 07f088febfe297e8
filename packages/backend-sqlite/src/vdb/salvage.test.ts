import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { after, describe, test } from '@vlink/fixtures/test';
import { ActionType, BagError, resolveWriterConfig, SchemaType, type Frame, type SalvageResult } from '@vlink/bag-core';
import { createTestContext, writeFrame } from '@vlink/bag-core/testing';
import { createSqliteBackend } from '../backend.js';
import { loadDriver } from '../driver/driver.js';
import { pattern, tempDir, withDb } from '../testing/util.js';
import { VdbReader } from './reader.js';
import { placeholderUrl } from './salvage.js';

// Salvage of a .vdb whose VLinkUrls is damaged: a row whose url id no readable VLinkUrls row names still holds an
// intact payload, so it is kept under a placeholder url (and the report says so) rather than dropped; a url without
// a type gets the one its first message decides (format reference §2.4). The repaired copy passes check.

const driver = await loadDriver();
const backend = createSqliteBackend({ driver });
const tmp = tempDir('salvage');
after(() => tmp.cleanup());

const URLS = ['dds://cam', 'dds://state', 'dds://rpc'];

function frame(i: number): Frame {
  const rpc = i % 3 === 2;
  return {
    timestamp: i * 10_000,
    url: URLS[i % 3]!,
    data: pattern(32 + (i % 5), i),
    serType: rpc ? 'pb.Req|pb.Resp' : 'raw',
    schemaType: SchemaType.Raw,
    actionType: rpc ? ActionType.ClientRequest : ActionType.Publish,
  };
}

async function record(name: string, n: number, compress: 'lzav' | 'none' = 'lzav'): Promise<string> {
  const path = tmp.path(name);
  const writer = await backend.createWriter(path, resolveWriterConfig({ compress }), createTestContext());
  for (let i = 0; i < n; i++) writeFrame(writer, frame(i));
  writer.close();
  return path;
}

interface Copy {
  frames: Frame[];
  types: Map<string, string>;
  ok: boolean;
}

async function readCopy(path: string): Promise<Copy> {
  const reader = VdbReader.open(driver, path);
  try {
    const frames = [...reader.frames({})];
    const types = new Map(
      withDb(driver, path, (db) => db.prepare('SELECT url, type FROM VLinkUrls;').all(), true).map((r) => [
        String(r['url']),
        String(r['type']),
      ]),
    );
    return { frames, types, ok: (await reader.verify({ quick: false })).ok };
  } finally {
    reader.close();
  }
}

const bytesOf = (frames: Frame[]) =>
  frames.map((f) => `${f.url}@${f.timestamp}:${Buffer.from(f.data).toString('hex')}`);

async function salvage(path: string): Promise<{ result: SalvageResult; copy: Copy }> {
  const target = `${path}.repaired.vdb`;
  const result = await backend.salvage!(path, target);
  return { result, copy: await readCopy(target) };
}

describe('.vdb salvage with a damaged VLinkUrls', () => {
  test('a url row gone: its rows are kept under a placeholder url, named in the problems', async () => {
    const path = await record('gone.vdb', 30);
    const id = Number(
      withDb(driver, path, (db) => db.prepare("SELECT id FROM VLinkUrls WHERE url = 'dds://state';").get())!['id'],
    );
    withDb(driver, path, (db) => db.exec("DELETE FROM VLinkUrls WHERE url = 'dds://state';"));
    const { result, copy } = await salvage(path);
    assert.equal(copy.ok, true);
    const want = Array.from({ length: 30 }, (_, i) => frame(i)).map((f) =>
      f.url === 'dds://state' ? { ...f, url: placeholderUrl(id) } : f,
    );
    assert.deepEqual(bytesOf(copy.frames), bytesOf(want), 'every payload, in order, the lost name replaced');
    assert.equal(copy.types.get(placeholderUrl(id)), 'Event', 'type from its first message (a publish)');
    const placeholder = result.urls.find((u) => u.url === placeholderUrl(id));
    assert.deepEqual([placeholder?.recoveredFrames, placeholder?.lostFrames], [10, 0]);
    assert.ok(
      result.problems.some((p) => p.includes(`url id ${id} is not in VLinkUrls`) && p.includes('its 10 rows are kept')),
      result.problems.join('\n'),
    );
  });

  test('VLinkUrls unreadable as a whole: every row kept under placeholders, types from the first messages', async () => {
    const path = await record('dropped.vdb', 30);
    withDb(driver, path, (db) => db.exec('DROP TABLE VLinkUrls;'));
    const { result, copy } = await salvage(path);
    assert.equal(copy.ok, true);
    assert.equal(copy.frames.length, 30);
    assert.deepEqual(
      bytesOf(copy.frames).map((line) => line.slice(line.indexOf('@'))),
      bytesOf(Array.from({ length: 30 }, (_, i) => frame(i))).map((line) => line.slice(line.indexOf('@'))),
    );
    assert.deepEqual([...new Set(copy.frames.map((f) => copy.types.get(f.url)))].sort(), ['Event', 'Method']);
    assert.ok(result.problems.some((p) => p.startsWith('VLinkUrls cannot be read')));
  });

  test('a VLinkDatas page copied over VLinkUrls: a strict open refuses it, the salvage keeps every row', async () => {
    // Found by hand: the data rows read as url rows (ids their times, names their url ids), no frame's url was known,
    // and a strict read gave none of the frames without an error.
    const path = await record('paged.vdb', 3000, 'none');
    const roots = withDb(
      driver,
      path,
      (db) => db.prepare("SELECT name, rootpage FROM sqlite_master WHERE type = 'table';").all(),
      true,
    );
    const urlsRoot = Number(roots.find((r) => r['name'] === 'VLinkUrls')!['rootpage']);
    const rootPages = new Set(roots.map((r) => Number(r['rootpage'])));
    const bytes = readFileSync(path);
    const pageSize = bytes.readUInt16BE(16);
    let dataLeaf = -1;
    for (let page = 2; page <= bytes.length / pageSize && dataLeaf < 0; page++)
      if (!rootPages.has(page) && bytes[(page - 1) * pageSize] === 0x0d) dataLeaf = page; // a table leaf: VLinkDatas'
    assert.ok(dataLeaf > 0, 'a leaf page of VLinkDatas');
    bytes.copyWithin((urlsRoot - 1) * pageSize, (dataLeaf - 1) * pageSize, dataLeaf * pageSize);
    writeFileSync(path, bytes);
    assert.throws(
      () => VdbReader.open(driver, path),
      (e: unknown) =>
        BagError.isInstance(e) &&
        e.code === 'CORRUPT_FILE' &&
        /a VLinkUrls row \(id \d+\) holds the number \d+, not a url/.test(e.message),
    );
    // tryToFix reads on, naming the frames of such a row as fix() does: a number is no url (it read as "0" before).
    const fixing = VdbReader.open(driver, path, { tryToFix: true });
    const urls = new Set([...fixing.frames()].map((f) => f.url));
    fixing.close();
    assert.ok(urls.size > 0);
    for (const url of urls) assert.match(url, /^\/vlink-bag\/unnamed-url-\d+$/);
    const { result, copy } = await salvage(path);
    assert.equal(copy.ok, true);
    const timesAndBytes = (frames: Frame[]) => bytesOf(frames).map((line) => line.slice(line.indexOf('@')));
    assert.deepEqual(
      timesAndBytes(copy.frames),
      timesAndBytes(Array.from({ length: 3000 }, (_, i) => frame(i))),
      'every payload, in order',
    );
    assert.ok(
      result.problems.some((p) =>
        /^\d+ VLinkUrls rows \(rows \d+…\d+\) hold a number where a url belongs: left out$/.test(p),
      ),
      result.problems.join('\n'),
    );
  });

  test('a url without a type gets the one its first message decides, and the report says so', async () => {
    const path = await record('typeless.vdb', 30);
    withDb(driver, path, (db) => db.exec("UPDATE VLinkUrls SET type = '' WHERE url = 'dds://rpc';"));
    const { result, copy } = await salvage(path);
    assert.equal(copy.ok, true);
    assert.equal(copy.types.get('dds://rpc'), 'Method');
    assert.ok(result.problems.includes('url dds://rpc had no type: set to Method from its first message'));
  });

  test('dropped rows count once: by their url when it is named, else beyond what the bookkeeping explains', async () => {
    const path = await record('mistyped.vdb', 30);
    // rowid 4 is frame 3 (dds://cam), its url id unreadable; rowid 9 is frame 8 (dds://rpc), its time unreadable
    withDb(driver, path, (db) => {
      db.exec("UPDATE VLinkDatas SET url = 'x' WHERE rowid = 4;");
      db.exec("UPDATE VLinkDatas SET elapsed = 'x' WHERE rowid = 9;");
    });
    const { result, copy } = await salvage(path);
    assert.equal(copy.ok, true);
    assert.deepEqual(
      bytesOf(copy.frames),
      bytesOf(Array.from({ length: 30 }, (_, i) => frame(i)).filter((_, i) => i !== 3 && i !== 8)),
    );
    const lost = Object.fromEntries(result.urls.map((u) => [u.url, u.lostFrames]));
    assert.deepEqual(lost, { 'dds://cam': 1, 'dds://state': 0, 'dds://rpc': 1 });
    assert.equal(result.unattributedLostFrames, 0, 'the cam row is the one its bookkeeping misses');
    assert.equal(result.problems.filter((p) => p.includes('mistyped columns')).length, 2);

    // With no bookkeeping to explain it (VLinkUrls gone), the row of an unreadable url id is lost on top.
    const bare = await record('mistyped-bare.vdb', 30);
    withDb(driver, bare, (db) => {
      db.exec("UPDATE VLinkDatas SET url = 'x' WHERE rowid = 4;");
      db.exec('DROP TABLE VLinkUrls;');
    });
    const again = await salvage(bare);
    assert.equal(again.copy.frames.length, 29);
    assert.equal(again.result.unattributedLostFrames, 1);
  });
});

describe('.vdb salvage of rows whose column types a flipped bit changed', () => {
  test('a payload stored as TEXT keeps its bytes; a NULL url is a made-up row, dropped and counted', async () => {
    // One bit turns a BLOB's serial type into TEXT of the same length, or an integer's into NULL (found by fuzzing);
    // a reader still returns both rows (the NULL url as url 0).
    const path = await record('types.vdb', 30, 'none');
    withDb(driver, path, (db) => {
      db.exec('UPDATE VLinkDatas SET data = CAST(data AS TEXT) WHERE rowid = 5;');
      db.exec('UPDATE VLinkDatas SET url = NULL WHERE rowid = 8;');
    });
    const { result, copy } = await salvage(path);
    assert.equal(copy.ok, true);
    const expected = Array.from({ length: 30 }, (_, i) => frame(i)).filter((_, i) => i !== 7);
    assert.deepEqual(bytesOf(copy.frames), bytesOf(expected));
    assert.equal(result.madeUpFrames, 1);
  });
});

describe('.vdb salvage of a file cut inside a page', () => {
  test('the rows of the cut page that lie before the cut are kept; those that held cut-off bytes are dropped, counted', async () => {
    // A reader (tryToFix) of a cut file reads the missing bytes as zeros: a row stored there comes back with zeros in
    // its payload, which only a copy can tell apart (read padded with zeros and with 0xff: found by fuzzing, where
    // the salvage zeroed the whole cut page and kept 119 of the 159 intact rows of a 160-row bag).
    const original = Array.from({ length: 400 }, (_, i) => frame(i));
    const whole = await record('cut-source.vdb', 400, 'none');
    const size = statSync(whole).size;
    const bytes = readFileSync(whole);
    const expected = new Set(bytesOf(original));
    // The first cut from the end (a few bytes at a time) whose reader returns a frame that was never written.
    let found: { path: string; read: Frame[] } | undefined;
    for (let cut = size - 16; cut > size - 4096 && !found; cut -= 16) {
      const path = tmp.path(`cut-${cut}.vdb`);
      writeFileSync(path, bytes.subarray(0, cut));
      let read: Frame[];
      try {
        const reader = VdbReader.open(driver, path, { tryToFix: true });
        try {
          read = [...reader.frames({})];
        } finally {
          reader.close();
        }
      } catch {
        continue;
      }
      if (bytesOf(read).some((f) => !expected.has(f))) found = { path, read };
    }
    assert.ok(found, 'some cut makes a reader return a made-up frame');
    const madeUp = bytesOf(found.read).filter((f) => !expected.has(f)).length;
    const { result, copy } = await salvage(found.path);
    assert.equal(copy.ok, true);
    assert.ok(
      bytesOf(copy.frames).every((f) => expected.has(f)),
      'no made-up frame in the copy',
    );
    assert.equal(result.madeUpFrames, madeUp);
    assert.equal(copy.frames.length, found.read.length - madeUp, 'every intact frame a reader gets is kept');
    assert.ok(result.problems.some((p) => /rows held bytes the cut took off: dropped/.test(p)));
  });
});
