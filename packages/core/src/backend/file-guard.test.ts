import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, type BagErrorCode } from '../errors.js';
import { guardFile, guardSidecars, isInside } from './file-guard.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'vlink-guard-')));
const root = join(base, 'root');
const outside = join(base, 'outside');
mkdirSync(join(root, 'sub'), { recursive: true });
mkdirSync(outside);
writeFileSync(join(root, 'bag.vdb'), 'x');
writeFileSync(join(outside, 'secret.vdb'), 'x');
symlinkSync(join(root, 'bag.vdb'), join(root, 'sub', 'inside-link.vdb'));
symlinkSync(join(outside, 'secret.vdb'), join(root, 'outside-link.vdb'));
const fifo = spawnSync('mkfifo', [join(root, 'fifo.vdb')]).status === 0;
after(() => rmSync(base, { recursive: true, force: true }));

const rejectsWith = (code: BagErrorCode, text: RegExp) => (e: unknown) => {
  assert.ok(BagError.isInstance(e), String(e));
  assert.equal(e.code, code, e.message);
  assert.match(e.message, text);
  return true;
};

describe('guardFile / guardSidecars', () => {
  test('a regular file passes, inside the confinement through a symlink too', async () => {
    await guardFile(join(root, 'bag.vdb'));
    await guardFile(join(root, 'bag.vdb'), { confineTo: root });
    await guardFile(join(root, 'sub', 'inside-link.vdb'), { confineTo: root });
    await guardFile(join(outside, 'secret.vdb'), { confineTo: base });
  });

  test('a symlink leading outside the confinement is refused: NOT_FOUND for the bag, CORRUPT_FILE for a segment', async () => {
    const link = join(root, 'outside-link.vdb');
    await guardFile(link); // not confined: followed
    await assert.rejects(guardFile(link, { confineTo: root }), rejectsWith('NOT_FOUND', /resolves outside/));
    await assert.rejects(
      guardFile(link, { confineTo: root, role: 'segment' }),
      rejectsWith('CORRUPT_FILE', /the segment resolves outside/),
    );
  });

  test('missing files and directories', async () => {
    await assert.rejects(guardFile(join(root, 'nope.vdb')), rejectsWith('NOT_FOUND', /no such bag file/));
    await assert.rejects(
      guardFile(join(root, 'nope.vdb'), { role: 'segment' }),
      rejectsWith('CORRUPT_FILE', /no such segment/),
    );
    await assert.rejects(
      guardFile(join(root, 'sub')),
      rejectsWith('INVALID_ARGUMENT', /is a directory, not a regular/),
    );
  });

  test('a path that is there but cannot be followed is not called missing (IO_ERROR with the cause)', async () => {
    const loop = join(root, 'loop.vdb');
    symlinkSync(loop, loop);
    await assert.rejects(guardFile(loop), rejectsWith('IO_ERROR', /cannot open the bag file \(ELOOP\)/));
    await assert.rejects(guardFile(loop, { role: 'segment' }), rejectsWith('CORRUPT_FILE', /cannot open the segment/));
  });

  test('a FIFO is refused without being opened (opening one blocks)', {
    skip: !fifo && 'mkfifo is missing',
  }, async () => {
    await assert.rejects(
      guardFile(join(root, 'fifo.vdb')),
      rejectsWith('INVALID_ARGUMENT', /is a FIFO, not a regular file/),
    );
    await assert.rejects(
      guardFile(join(root, 'fifo.vdb'), { role: 'segment' }),
      rejectsWith('CORRUPT_FILE', /segment is a FIFO/),
    );
  });

  test('sidecars: missing ones pass; a FIFO or an outside link is refused', {
    skip: !fifo && 'mkfifo is missing',
  }, async () => {
    await guardSidecars(join(root, 'bag.vdb'), ['-journal', '-wal'], root);
    spawnSync('mkfifo', [join(root, 'bag.vdb-wal')]);
    await assert.rejects(
      guardSidecars(join(root, 'bag.vdb'), ['-journal', '-wal']),
      rejectsWith('CORRUPT_FILE', /sidecar is a FIFO/),
    );
    rmSync(join(root, 'bag.vdb-wal'));
    symlinkSync(join(outside, 'secret.vdb'), join(root, 'bag.vdb-journal'));
    await guardSidecars(join(root, 'bag.vdb'), ['-journal']);
    await assert.rejects(
      guardSidecars(join(root, 'bag.vdb'), ['-journal'], root),
      rejectsWith('CORRUPT_FILE', /sidecar resolves outside/),
    );
  });

  test('isInside compares whole path components', () => {
    assert.equal(isInside('/a/b', '/a/b/c'), true);
    assert.equal(isInside('/a/b', '/a/b'), true);
    assert.equal(isInside('/a/b', '/a/bc'), false);
    assert.equal(isInside('/a/b/', '/a/b/c'), true);
    assert.equal(isInside('C:\\data', 'C:\\data\\x.vdb'), true);
    assert.equal(isInside('C:\\data', 'C:\\database\\x.vdb'), false);
  });
});

describe('BagError.reason', () => {
  test('is the message without the context and without a wrapped error’s text', () => {
    const plain = new BagError('CORRUPT_FILE', 'chunk record runs past the chunk', {
      file: '/srv/x.vcap',
      offset: 373,
    });
    assert.equal(plain.message, 'chunk record runs past the chunk (file /srv/x.vcap, offset 373)');
    assert.equal(plain.reason, 'chunk record runs past the chunk');
    const wrapped = BagError.wrap(
      new Error('SQLITE_CORRUPT: database disk image is malformed'),
      'CORRUPT_FILE',
      'cannot read',
      {
        file: '/srv/x.vdb',
      },
    );
    assert.equal(wrapped.message, 'cannot read: SQLITE_CORRUPT: database disk image is malformed (file /srv/x.vdb)');
    assert.equal(wrapped.reason, 'cannot read');
    assert.equal(BagError.wrap(plain, 'IO_ERROR', 'other').reason, plain.reason, 'a BagError is kept as it is');
  });
});
