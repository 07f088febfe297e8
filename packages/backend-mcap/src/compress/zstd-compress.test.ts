import assert from 'node:assert/strict';
import wasmZstd from '@foxglove/wasm-zstd';
import { decompress } from 'fzstd';
import { describe, test } from '@vlink/fixtures/test';
import { noiseBytes, patternBytes } from '@vlink/bag-core/testing';
import { zstdContentSize } from '../mcap/zstd-frame.js';
import { ZSTD_IMPLEMENTATION, zstdCompress, zstdCompressInto } from './zstd-compress.js';

// The negative levels use the WebAssembly codec, loaded asynchronously.
await wasmZstd.isLoaded;

describe('zstd chunk compression', () => {
  test('each runtime uses its fastest native zstd (the optional zstd-napi is installed in this repository)', () => {
    const g = globalThis as {
      Bun?: unknown;
      Deno?: { permissions: { querySync(d: { name: string }): { state: string } } };
    };
    const [major, minor] = (globalThis.process?.versions?.node ?? '0.0').split('.').map(Number) as [number, number];
    const nodeHasZstd = major > 22 || (major === 22 && minor >= 15);
    let expected: string;
    if (g.Bun !== undefined) expected = 'Bun.zstdCompressSync';
    else if (g.Deno !== undefined)
      // The addon only with the FFI permission granted (this suite runs with -A): Deno would ask for it otherwise.
      expected =
        g.Deno.permissions.querySync({ name: 'ffi' }).state === 'granted' ? 'zstd-napi' : 'zlib.zstdCompressSync';
    else expected = nodeHasZstd ? 'zlib.zstdCompressSync' : 'zstd-napi';
    // A silent fallback (npm drops an optional dependency whose build failed) is caught here.
    assert.equal(ZSTD_IMPLEMENTATION, expected);
  });

  test('its frames decode with another decoder and carry their content size, at every level, in any order', () => {
    const data = patternBytes(1_000_003, 9);
    // Levels change between calls: a reused compression context must take each new level (a higher one compresses
    // this input smaller), and negative levels go to the WebAssembly codec.
    const sizes = new Map<number, number>();
    for (const level of [1, 9, 1, -3, 3, 9]) {
      for (const input of [data, data.subarray(5, 17), new Uint8Array(0)]) {
        const frame = zstdCompress(input, level);
        assert.deepEqual(decompress(frame), input, `level ${level}, ${input.length} bytes`);
        assert.equal(zstdContentSize(frame), input.length, `content size in the header, level ${level}`);
      }
      const size = zstdCompress(data, level).length;
      if (sizes.has(level)) assert.equal(size, sizes.get(level), `level ${level} gives the same frame again`);
      sizes.set(level, size);
    }
    assert.ok(sizes.get(9)! < sizes.get(1)!, `level 9 (${sizes.get(9)} B) smaller than level 1 (${sizes.get(1)} B)`);
  });

  test('each result is its own: a later call leaves the bytes of an earlier one as they were', () => {
    const first = zstdCompress(patternBytes(200_000, 3), 1);
    const kept = first.slice();
    zstdCompress(patternBytes(400_000, 4), 1);
    assert.deepEqual(first, kept);
  });

  test('into a buffer: the same frame, in place, and −1 when it does not fit', () => {
    const data = patternBytes(1_000_003, 9);
    for (const level of [1, 3, -3]) {
      const expected = zstdCompress(data, level);
      // A shared buffer, as the compressor thread's output is, with room to spare and bytes before the result.
      const into = new Uint8Array(new SharedArrayBuffer(data.length + 100), 7);
      const length = zstdCompressInto(data, level, into);
      assert.deepEqual(into.subarray(0, length), expected, `level ${level}`);
      // libzstd may want some slack beyond the result while it writes (an exact fit is not promised).
      assert.equal(
        zstdCompressInto(data, level, into.subarray(0, expected.length + 1024)),
        expected.length,
        'a tight fit',
      );
      assert.equal(zstdCompressInto(data, level, into.subarray(0, expected.length - 1)), -1, 'one byte short');
    }
    // Bytes that do not compress need more room than they take: into a buffer of their own size they do not fit.
    const noise = noiseBytes(65_536, 7);
    assert.equal(zstdCompressInto(noise, 1, new Uint8Array(noise.length)), -1);
    const empty = new Uint8Array(64);
    const length = zstdCompressInto(new Uint8Array(0), 1, empty);
    assert.deepEqual(decompress(empty.subarray(0, length)), new Uint8Array(0));
  });
});
