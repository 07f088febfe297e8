import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, registerBackend, type Backend } from '@vlink/bag';
import { memoryBackend } from '@vlink/bag-core/testing';
import { findBags } from './list-bags.js';
import { resolveBagId } from './resolve-id.js';

// A stand-in for a split-recording format (.vdbx/.vcapx): only its extension matters to the listing.
const manifestBackend: Backend = {
  name: 'test-manifest',
  extensions: ['.testx'],
  createWriter: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test')),
  openReader: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test')),
};
// A stand-in for a bag-folder format (rosbag2): a folder is one bag when it holds the marker file.
const folderBackend: Backend = {
  name: 'test-folder',
  extensions: ['.testdb'],
  directoryMarker: 'test-folder.yaml',
  createWriter: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test')),
  openReader: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test')),
};
// A stand-in for Apollo's records: its files also carry a segment number (x.record.00000).
const numberedBackend: Backend = {
  name: 'test-numbered',
  extensions: ['.testrec'],
  readOnly: true,
  numberedSegments: true,
  createWriter: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test')),
  openReader: () => Promise.reject(new BagError('NOT_SUPPORTED', 'test')),
};
registerBackend(memoryBackend);
registerBackend(manifestBackend);
registerBackend(folderBackend);
registerBackend(numberedBackend);

const base = mkdtempSync(join(tmpdir(), 'vlink-list-'));
const root = join(base, 'root');
after(() => rmSync(base, { recursive: true, force: true }));

describe('findBags / resolveBagId', () => {
  test('lists by manifest, hides its segments, follows symlinks only inside the root, survives loops', async () => {
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    mkdirSync(join(base, 'outside'));
    const manifest = {
      VLinkHeader: { major: 2, complete: true },
      VLinkUrls: [],
      VLinkFiles: ['rec.1.memjson', 'rec.2.memjson', '../escape.memjson'],
    };
    writeFileSync(join(root, 'a', 'rec.testx'), JSON.stringify(manifest, null, 4));
    writeFileSync(join(root, 'a', 'rec.1.memjson'), '{}');
    writeFileSync(join(root, 'a', 'rec.2.memjson'), '{}');
    writeFileSync(join(root, 'a', 'rec.3.memjson'), '{}'); // the open segment after a crash: not in the manifest
    writeFileSync(join(root, 'a', 'b', 'deep.memjson'), '{}');
    writeFileSync(join(root, 'readme.md'), 'not a bag');
    writeFileSync(join(base, 'outside', 'x.memjson'), '{}');
    symlinkSync(join(base, 'outside'), join(root, 'out-link'));
    symlinkSync(root, join(root, 'a', 'loop'));
    const real = realpathSync(root);
    const ids = (await findBags(real)).map((b) => b.id).sort();
    assert.deepEqual(ids, ['a/b/deep.memjson', 'a/rec.3.memjson', 'a/rec.testx']);
  });

  test("a backend's numbered segments (x.testrec.00000) are listed; another extension's numbers are not", async () => {
    const dir = join(base, 'numbered');
    mkdirSync(dir);
    for (const name of ['drive.testrec.00000', 'drive.testrec.00001', 'drive.testx.1', 'drive.testrec.0a'])
      writeFileSync(join(dir, name), '');
    const ids = (await findBags(realpathSync(dir))).map((b) => b.id).sort();
    assert.deepEqual(ids, ['drive.testrec.00000', 'drive.testrec.00001']);
  });

  test('resolveBagId refuses everything that is not a plain relative file path inside the root', () => {
    const real = realpathSync(root);
    assert.equal(resolveBagId(real, 'a/b/deep.memjson').path, join(real, 'a', 'b', 'deep.memjson'));
    for (const id of [
      '',
      '/etc/passwd',
      '../x',
      'a/../a/rec.1.memjson',
      'a//rec.1.memjson',
      './a',
      'a\\b',
      'C:/x',
      'out-link/x.memjson',
      'a',
      'nope',
      'a/rec.1.memjson\0',
    ]) {
      assert.throws(
        () => resolveBagId(real, id),
        (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND',
        JSON.stringify(id),
      );
    }
  });

  test('a bag folder is listed and resolved as one bag, its storage files not on their own', async () => {
    const tree = join(base, 'folders');
    mkdirSync(join(tree, 'run-1'), { recursive: true });
    mkdirSync(join(tree, 'just-a-folder'));
    writeFileSync(join(tree, 'run-1', 'test-folder.yaml'), 'meta');
    writeFileSync(join(tree, 'run-1', 'run-1_0.testdb'), 'storage');
    writeFileSync(join(tree, 'just-a-folder', 'x.testdb'), 'storage');
    const real = realpathSync(tree);
    const bags = await findBags(real);
    assert.deepEqual(
      bags.map((b) => [b.id, b.format, b.size]),
      [
        ['just-a-folder/x.testdb', undefined, 7],
        ['run-1', 'test-folder', 11],
      ],
    );
    const folder = resolveBagId(real, 'run-1');
    assert.deepEqual([folder.path, folder.format, folder.size], [join(real, 'run-1'), 'test-folder', 11]);
    assert.throws(
      () => resolveBagId(real, 'just-a-folder'),
      (e: unknown) => BagError.isInstance(e) && e.code === 'NOT_FOUND',
    );
  });
});
