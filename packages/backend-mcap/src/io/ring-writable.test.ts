import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { resolveWriterConfig, type RecordingContext } from '@vlink/bag-core';
import { patternBytes } from '@vlink/bag-core/testing';
import { FileWritable } from './file-writable.js';
import { openFileWritable } from './open-file-writable.js';
import { RingWritable } from './ring-writable.js';

const dir = mkdtempSync(join(tmpdir(), 'vlink-ring-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const KiB = 1024;

/** What the file must hold: every write appended, every writeAt patched in, in call order. */
class Expected {
  bytes = new Uint8Array(0);
  append(data: Uint8Array): void {
    const next = new Uint8Array(this.bytes.length + data.length);
    next.set(this.bytes);
    next.set(data, this.bytes.length);
    this.bytes = next;
  }
}

describe('RingWritable (appends written by an I/O thread)', () => {
  test('the file holds exactly what was written: pieces larger than the ring, wrap-arounds, writev, writeAt', () => {
    const path = join(dir, 'order.bin');
    const ring = new RingWritable(path, 64 * KiB);
    const expected = new Expected();
    let seed = 1;
    // Sizes from 1 byte to 3× the ring, so pieces wrap at every offset and some wait for the thread mid-piece.
    for (const size of [1, 7, 4096, 65_535, 65_536, 65_537, 200_000, 3, 150_001, 64 * KiB * 3]) {
      const data = patternBytes(size, seed++);
      ring.write(data);
      expected.append(data);
      assert.equal(ring.position(), expected.bytes.length);
    }
    const parts = [patternBytes(10, 90), patternBytes(70_000, 91), patternBytes(0, 92), patternBytes(5, 93)];
    ring.writev(parts);
    for (const p of parts) expected.append(p);
    // A patch of bytes written earlier (what a spilled chunk's header needs): lands after everything before it.
    const patch = patternBytes(300, 94);
    ring.writeAt(patch, 1000);
    expected.bytes.set(patch, 1000);
    ring.write(patternBytes(33, 95));
    expected.append(patternBytes(33, 95));
    ring.flush();
    assert.deepEqual(new Uint8Array(readFileSync(path)), expected.bytes, 'after flush() the OS has every byte');
    ring.sync();
    ring.close();
    assert.deepEqual(new Uint8Array(readFileSync(path)), expected.bytes);
    assert.throws(() => ring.write(new Uint8Array(1)), { code: 'CLOSED' });
    ring.close();
  });

  test('the I/O thread wakes for every write and for close, whenever they come (no lost wake-up, no polling)', async () => {
    for (let i = 0; i < 20; i++) {
      const path = join(dir, `wake-${i}.bin`);
      const ring = new RingWritable(path, 64 * KiB);
      // Idle for a moment (the thread sleeps), or not at all (close races the thread's own check).
      if (i % 2 === 0) await new Promise((resolve) => setTimeout(resolve, i % 4 === 0 ? 5 : 0));
      ring.write(patternBytes(100 + i, i));
      if (i % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      const started = performance.now();
      ring.close();
      assert.ok(performance.now() - started < 2000, `close took ${performance.now() - started} ms`);
      assert.deepEqual(new Uint8Array(readFileSync(path)), patternBytes(100 + i, i));
    }
  });

  test('writeAt outside the written bytes is refused', () => {
    const ring = new RingWritable(join(dir, 'at.bin'), 64 * KiB);
    ring.write(new Uint8Array(10));
    assert.throws(() => ring.writeAt(new Uint8Array(4), 8), { code: 'INTERNAL' });
    ring.close();
  });

  test('a write error in the I/O thread is thrown as IO_ERROR by the next call (/dev/full: ENOSPC)', { skip: existsSync('/dev/full') ? false : 'no /dev/full here' }, () => {
    const ring = new RingWritable('/dev/full', 64 * KiB);
    // The first writes only fill the ring; the thread's ENOSPC reaches a later write, flush or close.
    assert.throws(
      () => {
        for (let i = 0; i < 64; i++) ring.write(patternBytes(16 * KiB, i));
        ring.flush();
      },
      (error: { code?: string; message?: string }) => error.code === 'IO_ERROR' && /ENOSPC|no space/i.test(String(error.message)),
    );
    assert.throws(() => ring.flush(), { code: 'IO_ERROR' }, 'the failure sticks');
    assert.throws(() => ring.close(), { code: 'IO_ERROR' });
  });

  test('a file that cannot be created is IO_ERROR at construction', () => {
    assert.throws(() => new RingWritable(join(dir, 'missing-dir', 'x.bin'), 64 * KiB), { code: 'IO_ERROR' });
  });
});

describe('openFileWritable picks the I/O thread only on the writer thread, for zstd chunks of 1 MiB or more', () => {
  const context = (writerThread: boolean) => ({ writerThread }) as unknown as RecordingContext;
  const MiB = 1024 * KiB;
  const cases: Array<[writerThread: boolean, cacheSize: number, compress: 'zstd' | 'none' | 'auto', ring: boolean]> = [
    [true, 4 * MiB, 'zstd', true],
    [true, 4 * MiB, 'auto', true],
    [true, MiB, 'zstd', true],
    [true, 4 * MiB, 'none', false],
    [true, 512 * KiB, 'zstd', false],
    [true, 0, 'zstd', false],
    [false, 4 * MiB, 'zstd', false],
  ];
  for (const [writerThread, cacheSize, compress, ring] of cases) {
    test(`writerThread ${writerThread}, cacheSize ${cacheSize}, compress ${compress} → ${ring ? 'RingWritable' : 'FileWritable'}`, () => {
      const w = openFileWritable(join(dir, `pick-${writerThread}-${cacheSize}-${compress}.bin`), resolveWriterConfig({ cacheSize, compress }), context(writerThread));
      try {
        assert.equal(w instanceof RingWritable, ring);
        assert.equal(w instanceof FileWritable, !ring);
      } finally {
        w.close();
      }
    });
  }
});
