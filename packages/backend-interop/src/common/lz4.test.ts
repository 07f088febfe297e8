import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from '@vlink/fixtures/test';
import { compressFrame } from 'lz4js';
import { BagError, BagReader } from '@vlink/bag-core';
import { foreignPath } from '../testing/expected.js';
import { registerAll } from '../testing/register.js';
import { lz4Frame } from './lz4.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-lz4-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** An LZ4 frame of `data` written by another implementation (lz4js's compressor). */
function frameOf(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(data.length * 2 + 64);
  return out.subarray(0, compressFrame(data, out));
}

function mixed(size: number): Uint8Array {
  const out = new Uint8Array(size);
  let x = 12345;
  for (let i = 0; i < size; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    // Runs, repeats at short and long distances, and noise: literals, overlapping and distant matches.
    out[i] = i % 1000 < 300 ? 7 : i % 1000 < 600 ? out[Math.max(0, i - 37)]! : x >>> 24;
  }
  return out;
}

test('frames written by another implementation decode to their bytes', () => {
  for (const data of [new Uint8Array(0), Uint8Array.of(1), new Uint8Array(70_000).fill(9), mixed(300_000)]) {
    assert.deepEqual(lz4Frame(frameOf(data), data.length), data);
  }
});

test('stored blocks, content size and checksum fields are read as the frame format places them', () => {
  // Flags: version 1, independent blocks, block checksums, content size, content checksum; then BD and HC.
  const payload = Uint8Array.of(1, 2, 3, 4, 5);
  const frame = Uint8Array.of(
    ...[0x04, 0x22, 0x4d, 0x18, 0b0111_1100, 0x40, ...[5, 0, 0, 0, 0, 0, 0, 0], 0x00],
    ...[5, 0, 0, 0x80, ...payload, 0xaa, 0xbb, 0xcc, 0xdd],
    ...[0, 0, 0, 0, 0x11, 0x22, 0x33, 0x44],
  );
  assert.deepEqual(lz4Frame(frame, 5), payload);
});

test('a damaged frame is a RangeError at once, never a long loop over bytes that are not there', () => {
  const good = frameOf(mixed(100_000));
  const header = good.subarray(0, 7);
  const block = (bytes: number[]) => Uint8Array.of(...header, bytes.length, 0, 0, 0, ...bytes, 0, 0, 0, 0);
  const cases: Array<[string, Uint8Array, RegExp]> = [
    ['no magic', good.slice(1), /magic/],
    ['cut in the header', good.subarray(0, 5), /magic|header/],
    ['no end mark', good.subarray(0, good.length - 4), /end mark|runs past/],
    ['a block longer than the frame', Uint8Array.of(...header, 0xff, 0xff, 0xff, 0x7f, 1, 2, 3), /runs past the frame/],
    // A literal length of 15 + 255 × many, in a block of a few bytes (lz4js read on past the end for minutes).
    ['a literal run past the block', block([0xf0, 255, 255, 255, 255, 1]), /literal/],
    ['a match before the start of the output', block([0x10, 65, 9, 0]), /offset 9/],
    ['a match of offset 0', block([0x10, 65, 0, 0]), /offset 0/],
    ['more output than the frame says', frameOf(new Uint8Array(1000).fill(3)), /more output|decompressed to/],
  ];
  for (const [name, frame, message] of cases) {
    // Sizes the frame could hold (a larger one is refused before decoding: see the next test).
    const size = name === 'more output than the frame says' ? 10 : Math.min(100_000, 255 * frame.length);
    const started = performance.now();
    assert.throws(
      () => lz4Frame(frame, size),
      (error: unknown) => error instanceof RangeError && message.test(error.message),
      name,
    );
    assert.ok(performance.now() - started < 1000, `${name}: took ${performance.now() - started} ms`);
  }
});

test('a size no frame of its length can hold is refused before the output is allocated', () => {
  // The most compressible input there is still decodes at its size (lz4js writes one long match per block).
  const zeros = new Uint8Array(1 << 20);
  const frame = frameOf(zeros);
  assert.deepEqual(lz4Frame(frame, zeros.length), zeros);
  // A ROS 1 chunk header damaged to claim 512 MiB (fuzz foreign seed 1212 #4299): refused, not allocated.
  assert.throws(
    () => lz4Frame(frame, 512 << 20),
    (e: unknown) => e instanceof RangeError && /an lz4 frame of \d+ bytes cannot hold 536870912 bytes/.test(e.message),
  );
});

test('a ROS 1 lz4 bag with a damaged chunk (found by fuzzing: it hung every read) fails typed, or reads around it', async () => {
  const bytes = new Uint8Array(readFileSync(foreignPath('ros1/lz4.bag')));
  // The fuzz case: 1,278 bytes of the bag copied over its middle, into a compressed chunk.
  bytes.copyWithin(13_027, 17_586, 17_586 + 1_278);
  const path = join(dir, 'damaged-lz4.bag');
  writeFileSync(path, bytes);
  for (const tryToFix of [false, true]) {
    const started = performance.now();
    let frames = 0;
    try {
      const reader = await BagReader.create(path, { tryToFix });
      try {
        for await (const _ of reader.frames()) frames++;
      } finally {
        reader.close();
      }
      assert.ok(tryToFix, 'a strict read of the damaged chunk must fail');
    } catch (error) {
      assert.ok(BagError.isInstance(error), String(error));
      assert.ok(['CORRUPT_FILE', 'CORRUPT_DATA'].includes(error.code), error.code);
    }
    assert.ok(performance.now() - started < 10_000, `tryToFix ${tryToFix}: ${performance.now() - started} ms`);
    if (tryToFix) assert.ok(frames > 0, 'the intact chunks are read');
  }
});
