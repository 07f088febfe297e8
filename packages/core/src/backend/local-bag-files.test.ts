import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { isInsideRoot, listLocalBagFiles, segmentsOfManifests, type LocalBagFileOptions } from './local-bag-files.js';

// The walk `serve` lists and `index` catalogs: which files are bags, what symlinks may reach, and the limits.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'vlink-tree-')));
const root = join(base, 'root');
const sibling = join(base, 'root-sibling'); // shares the root's prefix: must stay outside
for (const dir of [root, join(root, 'a', 'b'), sibling]) mkdirSync(dir, { recursive: true });
writeFileSync(join(root, 'one.vdb'), 'x');
writeFileSync(join(root, 'notes.txt'), 'not a bag');
writeFileSync(join(root, 'a', 'b', 'deep.vcap'), 'xy');
writeFileSync(join(sibling, 'outside.vdb'), 'secret');
symlinkSync(sibling, join(root, 'to-sibling'));
symlinkSync(join(root, 'a'), join(root, 'loop')); // a second way into a/: visited once
writeFileSync(
  join(root, 'drive.vdbx'),
  '\uFEFF{"VLinkHeader":{},"VLinkFiles":["drive.1.vdb","../one.vdb","gone.vdb"]}',
);
writeFileSync(join(root, 'drive.1.vdb'), 'segment');
writeFileSync(join(root, 'fake.vdbx'), '{"other":1,"VLinkFiles":["one.vdb"]}');
after(() => rmSync(base, { recursive: true, force: true }));

const options = (over: Partial<LocalBagFileOptions> = {}): LocalBagFileOptions => ({
  extensions: new Set(['.vdb', '.vcap', '.vdbx']),
  maxFiles: 1000,
  onTooMany: 'throw',
  onUnreadable: 'throw',
  ...over,
});
const names = (files: Array<{ linkPath: string }>) => files.map((f) => relative(root, f.linkPath));

describe('local bag files', () => {
  test('bags by extension, recursively, sorted, inside the root only, each real folder once', async () => {
    const files = await listLocalBagFiles(root, options());
    assert.deepEqual(names(files), ['a/b/deep.vcap', 'drive.1.vdb', 'drive.vdbx', 'fake.vdbx', 'one.vdb']);
    const deep = files[0]!;
    assert.equal(deep.realPath, join(root, 'a', 'b', 'deep.vcap'));
    assert.equal(deep.size, 2);
  });

  test('numbered segments (x.record.00000) are bags where their extension is numbered, and only there', async () => {
    const dir = join(base, 'numbered');
    mkdirSync(dir);
    for (const name of ['run.record.00000', 'run.record.00001', 'run.record.x1', 'one.vdb.1', 'run.record'])
      writeFileSync(join(dir, name), 'x');
    const listed = async (numbered?: string[]) =>
      (
        await listLocalBagFiles(
          dir,
          options({ extensions: new Set(['.vdb', '.record']), numberedExtensions: numbered && new Set(numbered) }),
        )
      ).map((f) => relative(dir, f.linkPath));
    assert.deepEqual(await listed(['.record']), ['run.record', 'run.record.00000', 'run.record.00001']);
    assert.deepEqual(await listed(), ['run.record']);
  });

  test('isInsideRoot: the root and below, never a sibling sharing its prefix', () => {
    assert.equal(isInsideRoot(root, root), true);
    assert.equal(isInsideRoot(root, join(root, 'x')), true);
    assert.equal(isInsideRoot(root, sibling), false);
    assert.equal(isInsideRoot(`${root}/`, join(root, 'x')), true);
  });

  test('a bag folder (by its marker file) is one bag, with the size and time of its files, not looked into', async () => {
    const tree = join(base, 'folders');
    mkdirSync(join(tree, 'drive', 'nested'), { recursive: true });
    writeFileSync(join(tree, 'drive', 'metadata.yaml'), 'abc');
    writeFileSync(join(tree, 'drive', 'drive_0.db3'), 'abcdefg');
    writeFileSync(join(tree, 'drive', 'nested', 'inner.vdb'), 'x');
    writeFileSync(join(tree, 'plain.vdb'), 'x');
    // A link in a bag folder does not count: its target may be anywhere.
    symlinkSync(join(sibling, 'outside.vdb'), join(tree, 'drive', 'drive_1.db3'));
    const markers = new Map([['metadata.yaml', 'rosbag2']]);
    const files = await listLocalBagFiles(tree, {
      ...options(),
      extensions: new Set(['.vdb', '.db3']),
      folderMarkers: markers,
    });
    assert.deepEqual(
      files.map((f) => [relative(tree, f.linkPath), f.folderFormat, f.size]),
      [
        ['drive', 'rosbag2', 10],
        ['plain.vdb', undefined, 1],
      ],
    );
    // Without markers the folder is only a folder: its files are listed one by one.
    const plain = await listLocalBagFiles(tree, { ...options(), extensions: new Set(['.vdb', '.db3']) });
    assert.deepEqual(
      plain.map((f) => relative(tree, f.linkPath)),
      ['drive/drive_0.db3', 'drive/nested/inner.vdb', 'plain.vdb'],
    );
  });

  test('maxDepth leaves deeper folders out', async () => {
    assert.deepEqual(names(await listLocalBagFiles(root, options({ maxDepth: 1 }))), [
      'drive.1.vdb',
      'drive.vdbx',
      'fake.vdbx',
      'one.vdb',
    ]);
  });

  test('past maxFiles: LIMIT_REACHED, or a listing of what was found before', async () => {
    await assert.rejects(
      listLocalBagFiles(root, options({ maxFiles: 3 })),
      (error: unknown) => error instanceof BagError && error.code === 'LIMIT_REACHED',
    );
    // Entries in name order: a/, a/b/, a/b/deep.vcap, then drive.1.vdb would be the 4th.
    assert.deepEqual(names(await listLocalBagFiles(root, options({ maxFiles: 3, onTooMany: 'stop' }))), [
      'a/b/deep.vcap',
    ]);
    assert.deepEqual(names(await listLocalBagFiles(root, options({ maxFiles: 4, onTooMany: 'stop' }))), [
      'a/b/deep.vcap',
      'drive.1.vdb',
    ]);
  });

  test('an unreadable root: IO_ERROR, or an empty listing', async () => {
    const missing = join(base, 'missing');
    await assert.rejects(
      listLocalBagFiles(missing, options()),
      (error: unknown) => error instanceof BagError && error.code === 'IO_ERROR',
    );
    assert.deepEqual(await listLocalBagFiles(missing, options({ onUnreadable: 'skip' })), []);
  });

  test("a manifest's listed segments by real path (bare names that exist); non-manifests are left out", async () => {
    const files = await listLocalBagFiles(root, options());
    const segments = await segmentsOfManifests(files);
    assert.deepEqual([...segments.keys()], [join(root, 'drive.vdbx')]);
    assert.deepEqual(segments.get(join(root, 'drive.vdbx')), [join(root, 'drive.1.vdb')]);
  });
});
