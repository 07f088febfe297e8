import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader, BagWriter, repairBag } from './index.js';

// Paths no file can have, given to every entry point that takes a bag path, on the real backends: refused as
// INVALID_ARGUMENT, and nothing written anywhere. Before, SQLite took the part of 'a\0b.vdb' before the NUL and
// BagWriter.create wrote a file named 'a'.
const dir = mkdtempSync(join(tmpdir(), 'vlink-bag-paths-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('bag paths', () => {
  for (const ext of ['.vdb', '.vcap', '.vdbx', '.vcapx']) {
    test(`a NUL character in a ${ext} path is refused by create, read and repair; no file appears`, async () => {
      const path = join(dir, `a\0b${ext}`);
      const refused = { code: 'INVALID_ARGUMENT', message: /must not contain a NUL character/ };
      await assert.rejects(BagWriter.create(path, { syncMode: true }), refused);
      await assert.rejects(BagWriter.create(path), refused);
      await assert.rejects(BagReader.create(path), refused);
      await assert.rejects(repairBag(path), refused);
      assert.deepEqual(readdirSync(dir), []);
    });
  }

  test('an empty path is refused by create, read and repair', async () => {
    const refused = { code: 'INVALID_ARGUMENT', message: /bag path must not be empty/ };
    await assert.rejects(BagWriter.create(''), refused);
    await assert.rejects(BagReader.create(''), refused);
    await assert.rejects(repairBag(''), refused);
  });
});
