import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { isInside, resolveBagId } from './resolve-id.js';

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
