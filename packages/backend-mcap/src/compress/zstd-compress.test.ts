import assert from 'node:assert/strict';
import wasmZstd from '@foxglove/wasm-zstd';
import { decompress } from 'fzstd';
import { describe, test } from '@vlink/fixtures/test';
import { patternBytes } from '@vlink/bag-core/testing';
import { zstdContentSize } from '../mcap/zstd-frame.js';
import { ZSTD_IMPLEMENTATION, zstdCompress } from './zstd-compress.js';

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
});
