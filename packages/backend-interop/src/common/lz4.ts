import { decompressFrame } from 'lz4js';
import { type Codecs, loadCodecs } from '@vlink/bag-mcap';

/**
 * LZ4 frame decompression (what roslz4 and MCAP write) by `lz4js`, pure JavaScript and stateless. Not
 * `@foxglove/wasm-lz4`: it keeps one decompression context for the process, and a single damaged frame leaves that
 * context failing every later decompression (version 1.0.2; one bad file would break every lz4 bag read after it).
 * Returns exactly `size` bytes or throws.
 */
export function lz4Frame(data: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(size);
  const written = decompressFrame(data, out);
  if (written !== size) throw new RangeError(`lz4 frame decompressed to ${written} bytes, not ${size}`);
  return out;
}

let codecs: Promise<Codecs> | undefined;

/** `@vlink/bag-mcap`'s chunk codecs (zstd) with lz4 from {@link lz4Frame}, for the MCAP-based readers here. */
export function loadMcapCodecs(): Promise<Codecs> {
  codecs ??= loadCodecs().then((base) => Object.freeze({ ...base, lz4: { decompress: lz4Frame } }));
  return codecs;
}
