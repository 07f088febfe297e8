import lz4 from '@foxglove/wasm-lz4';
import Bzip2 from '@foxglove/wasm-bz2';
import { BagError } from '@vlink/bag-core';

/** Decompresses a chunk to exactly `size` bytes; throws on anything else. */
export type ChunkDecompress = (data: Uint8Array, size: number) => Uint8Array;

let loaded: Promise<Record<string, ChunkDecompress>> | undefined;

/**
 * The chunk codecs ROS 1 bags use, keyed by the chunk's `compression` field: `none`, `bz2` (`@foxglove/wasm-bz2`,
 * what Foxglove's own bag reader uses) and `lz4` (roslz4 writes LZ4 frames: `@foxglove/wasm-lz4`). Both
 * WebAssembly modules load asynchronously once per process; after that they decompress synchronously.
 */
export function loadRos1Codecs(): Promise<Record<string, ChunkDecompress>> {
  loaded ??= Promise.all([Bzip2.init(), lz4.isLoaded]).then(
    ([bzip2]) => ({
      none: (data) => data,
      bz2: (data, size) => bzip2.decompress(data, size, { small: false }),
      lz4: (data, size) => {
        const out = lz4(data, size);
        return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
      },
    }),
    (error: unknown) => {
      loaded = undefined;
      throw BagError.wrap(error, 'DRIVER_MISSING', 'cannot load the bz2/lz4 WebAssembly codecs');
    },
  );
  return loaded;
}
