import Bzip2 from '@foxglove/wasm-bz2';
import { BagError } from '@vlink/bag-core';
import { lz4Frame } from '../common/lz4.js';

/** Decompresses a chunk to exactly `size` bytes; throws on anything else. */
export type ChunkDecompress = (data: Uint8Array, size: number) => Uint8Array;

let loaded: Promise<Record<string, ChunkDecompress>> | undefined;

/**
 * The chunk codecs ROS 1 bags use, keyed by the chunk's `compression` field: `none`, `bz2` (`@foxglove/wasm-bz2`,
 * what Foxglove's own bag reader uses; loaded asynchronously once per process, then synchronous) and `lz4` (roslz4
 * writes LZ4 frames: `lz4Frame`).
 */
export function loadRos1Codecs(): Promise<Record<string, ChunkDecompress>> {
  loaded ??= Bzip2.init().then(
    (bzip2) => ({
      none: (data) => data,
      bz2: (data, size) => bzip2.decompress(data, size, { small: false }),
      lz4: lz4Frame,
    }),
    (error: unknown) => {
      loaded = undefined;
      throw BagError.wrap(error, 'DRIVER_MISSING', 'cannot load the bz2 WebAssembly codec');
    },
  );
  return loaded;
}
