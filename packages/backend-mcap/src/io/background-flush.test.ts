import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import type { BagError } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { BACKGROUND_FLUSH_BYTES, BackgroundFlush, type Datasync } from './background-flush.js';
import { FileWritable } from './file-writable.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-background-flush-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const nextPath = () => join(dir, `f${files++}.bin`);

/** Descriptors of this process open on `path` (Linux's /proc), undefined where there is none. */
function openDescriptors(path: string): number | undefined {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return undefined;
  }
  const real = realpathSync(path);
  return fds.filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === real;
    } catch {
      return false;
    }
  }).length;
}

/** A datasync that records its calls and returns only when told to. */
function heldDatasync() {
  const calls: { fd: number; done: (error: Error | null) => void }[] = [];
  const datasync: Datasync = (fd, done) => calls.push({ fd, done });
  return { calls, datasync };
}

describe('BackgroundFlush', () => {
  test('one flush per 16 MiB written, started without waiting for the ones before', () => {
    const path = nextPath();
    new FileWritable(path).close(); // the file must exist
    const { calls, datasync } = heldDatasync();
    const flushes = new BackgroundFlush(path, datasync);
    flushes.wrote(BACKGROUND_FLUSH_BYTES - 1);
    assert.equal(calls.length, 0);
    flushes.wrote(1);
    assert.equal(calls.length, 1);
    flushes.wrote(BACKGROUND_FLUSH_BYTES);
    flushes.wrote(BACKGROUND_FLUSH_BYTES);
    assert.equal(calls.length, 3, 'a writer that never yields still flushes as it goes');
    for (const call of calls) call.done(null);
    flushes.close();
  });

  test('its descriptor outlives close while a flush runs, and is closed when the last one returns', (t) => {
    const path = nextPath();
    new FileWritable(path).close();
    if (openDescriptors(path) === undefined) return t.skip('no /proc here');
    const { calls, datasync } = heldDatasync();
    const flushes = new BackgroundFlush(path, datasync);
    flushes.wrote(2 * BACKGROUND_FLUSH_BYTES);
    flushes.wrote(BACKGROUND_FLUSH_BYTES);
    assert.equal(calls.length, 2);
    flushes.close();
    flushes.wrote(BACKGROUND_FLUSH_BYTES);
    assert.equal(calls.length, 2, 'none starts after close');
    assert.equal(openDescriptors(path), 1, 'still open: a queued flush must not reach a reused descriptor number');
    calls[0]!.done(null);
    assert.equal(openDescriptors(path), 1);
    calls[1]!.done(null);
    assert.equal(openDescriptors(path), 0);
  });

  test('a failed flush fails the next sync of its file, once, as an IO_ERROR', () => {
    const path = nextPath();
    const failing: Datasync = (_fd, done) =>
      done(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    const writable = new FileWritable(path, failing);
    writable.write(new Uint8Array(BACKGROUND_FLUSH_BYTES));
    assert.throws(
      () => writable.sync(),
      (error: BagError) => error.code === 'IO_ERROR' && /background flush/.test(error.message) && error.file === path,
    );
    writable.sync(); // the failure was reported; this fsync passed on its own
    writable.close();
  });

  test('FileWritable: a file of 40 MiB written through it reads back whole, and nothing stays open', async () => {
    const path = nextPath();
    const writable = new FileWritable(path);
    const block = patternBytes(1024 * 1024, 3);
    for (let i = 0; i < 40; i++) {
      if (i % 2) writable.write(block);
      else writable.writev([block.subarray(0, 1000), block.subarray(1000)]);
    }
    writable.sync();
    writable.close();
    const back = readFileSync(path);
    assert.equal(back.length, 40 * block.length);
    assert.deepEqual(new Uint8Array(back.subarray(39 * block.length)), block);
    // The flushes it started return on the I/O pool; their descriptor closes with the last of them.
    for (let i = 0; i < 200 && (openDescriptors(path) ?? 0) > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(openDescriptors(path) ?? 0, 0);
  });
});
