import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { isInside, isSafeRelative, resolveBagId } from './resolve-id.js';

// A served root `bags` next to a sibling `bags-private`: the sibling's paths start with the root's path as a string,
// so only the separator in the prefix check tells them apart (the mutant that drops it must fail here).
const base = realpathSync(mkdtempSync(join(tmpdir(), 'vlink-resolve-')));
after(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, 'bags');
const sibling = join(base, 'bags-private');
mkdirSync(join(root, 'day1'), { recursive: true });
mkdirSync(sibling);
writeFileSync(join(root, 'day1', 'drive.vdb'), 'inside');
writeFileSync(join(sibling, 'secret.vdb'), 'outside');
symlinkSync(join(sibling, 'secret.vdb'), join(root, 'leak.vdb'));
symlinkSync(sibling, join(root, 'leakdir'));

const notFound = (e: unknown) => (e as { code?: string }).code === 'NOT_FOUND';

describe('resolveBagId: a sibling folder that shares the root as a prefix', () => {
  test('isInside needs the separator: bags-private is not inside bags, bags/x is', () => {
    assert.equal(isInside(root, join(sibling, 'secret.vdb')), false);
    assert.equal(isInside(root, `${root}x`), false);
    assert.equal(isInside(root, join(root, 'day1', 'drive.vdb')), true);
    assert.equal(isInside(`${root}/`, join(root, 'day1', 'drive.vdb')), true, 'a root given with its separator');
  });

  test('symlinks from the root into the sibling answer NOT_FOUND; a file in the root resolves to itself', () => {
    assert.throws(() => resolveBagId(root, 'leak.vdb'), notFound);
    assert.throws(() => resolveBagId(root, 'leakdir/secret.vdb'), notFound);
    assert.throws(() => resolveBagId(root, '../bags-private/secret.vdb'), notFound);
    const inside = resolveBagId(root, 'day1/drive.vdb');
    assert.equal(inside.path, join(root, 'day1', 'drive.vdb'));
    assert.equal(inside.size, 'inside'.length);
  });
});

describe('isSafeRelative: what an id may look like before the file system is asked', () => {
  test('a drive-letter id is refused on every platform; a colon later in a name is an ordinary character', () => {
    // On POSIX `C:x` is not absolute, so only the drive-letter rule refuses it (Windows would read it as relative to
    // the current folder of drive C). A colon inside a name (`cam:front`) is legal on POSIX and must stay servable.
    assert.equal(isSafeRelative('C:x.vdb'), false);
    assert.equal(isSafeRelative('c:/bags/x.vdb'), false);
    assert.equal(isSafeRelative('day1/cam:front.vdb'), true);
    assert.equal(isSafeRelative('1:x.vdb'), true, 'a digit before the colon is no drive letter');
  });

  test('absolute, dotted, empty and backslashed ids are refused; plain relative ones pass', () => {
    for (const id of ['/etc/passwd', 'a//b.vdb', './a.vdb', 'a/../b.vdb', '', 'a\\b.vdb', 'a\0b.vdb'])
      assert.equal(isSafeRelative(id), false, JSON.stringify(id));
    assert.equal(isSafeRelative('x'.repeat(4097)), false, 'longer than any path a file system takes');
    assert.equal(isSafeRelative('day1/drive.vdb'), true);
  });

  test('a missing bag is NOT_FOUND naming the id the client sent', () => {
    assert.throws(
      () => resolveBagId(root, 'day1/none.vdb'),
      (e: Error & { code?: string }) => e.code === 'NOT_FOUND' && e.message.includes('"day1/none.vdb"'),
    );
  });
});
