import { type Codecs, loadCodecs } from '@vlink/bag-mcap';

/**
 * LZ4 frame decompression (what roslz4 and MCAP write), in TypeScript with every length checked against its input and
 * output. Written here because neither library fits a reader of damaged files: `@foxglove/wasm-lz4` keeps one
 * decompression context for the process, and a single damaged frame leaves it failing every later decompression
 * (version 1.0.2: one bad file would break every lz4 bag read after it); `lz4js` (0.2.0, unmaintained) trusts the
 * lengths it reads, so a damaged block size or literal run makes it loop for minutes over bytes that are not there
 * (found by fuzzing a ROS 1 lz4 bag: a chunk with 1,278 bytes copied over hung every read). The format:
 * https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md and lz4_Block_format.md.
 *
 * Returns exactly `size` bytes or throws a RangeError saying what is wrong (the readers report it as damage).
 */
export function lz4Frame(data: Uint8Array, size: number): Uint8Array {
  // The output is allocated before decoding: a size one damaged field made up is refused first (fuzz foreign seed
  // 1212 #4299: a ROS 1 chunk of 19 KiB claiming 512 MiB, all of it allocated).
  if (size > maxLz4Output(data.length))
    throw new RangeError(`an lz4 frame of ${data.length} bytes cannot hold ${size} bytes`);
  const out = new Uint8Array(size);
  let at = frameHeaderEnd(data);
  let written = 0;
  const { blockChecksums, contentChecksum } = frameFlags(data);
  for (;;) {
    if (at + 4 > data.length) throw new RangeError('lz4 frame ends without its end mark');
    const word = u32(data, at);
    at += 4;
    if (word === 0) break;
    const stored = (word & 0x80000000) !== 0;
    const length = word & 0x7fffffff;
    if (at + length > data.length) throw new RangeError(`lz4 block of ${length} bytes runs past the frame`);
    if (stored) {
      if (written + length > size) throw new RangeError(`lz4 frame holds more than ${size} bytes`);
      out.set(data.subarray(at, at + length), written);
      written += length;
    } else written = decodeBlock(data, at, at + length, out, written);
    at += length + (blockChecksums ? 4 : 0);
  }
  if (contentChecksum && at + 4 > data.length) throw new RangeError('lz4 frame ends inside its checksum');
  if (written !== size) throw new RangeError(`lz4 frame decompressed to ${written} bytes, not ${size}`);
  return out;
}

const MAGIC = 0x184d2204;

/**
 * The most bytes an lz4 frame of `length` bytes can decode to: a match's length grows by 255 per byte of its length
 * field, and no sequence does better (lz4_Block_format.md). The same bound as the MCAP chunk loader's for lz4 chunks
 * (backend-mcap `chunk-loader.ts`), with room for the smallest frames.
 */
function maxLz4Output(length: number): number {
  return 256 * length + 4096;
}

function u32(data: Uint8Array, at: number): number {
  return (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24)) >>> 0;
}

function frameFlags(data: Uint8Array): { blockChecksums: boolean; contentChecksum: boolean } {
  const flags = data[4]!;
  return { blockChecksums: (flags & 0x10) !== 0, contentChecksum: (flags & 0x04) !== 0 };
}

/** Where the first block starts: after the magic, the descriptor (flags, block size, optional fields) and its check. */
function frameHeaderEnd(data: Uint8Array): number {
  if (data.length < 7 || u32(data, 0) !== MAGIC) throw new RangeError('not an lz4 frame (magic)');
  const flags = data[4]!;
  if (flags >> 6 !== 1) throw new RangeError(`lz4 frame version ${flags >> 6} (only 1 is defined)`);
  // Content size (8 bytes) and dictionary id (4), when their flags say so; then the header checksum byte.
  const end = 6 + ((flags & 0x08) !== 0 ? 8 : 0) + ((flags & 0x01) !== 0 ? 4 : 0) + 1;
  if (end > data.length) throw new RangeError('lz4 frame header is cut');
  if ((flags & 0x01) !== 0) throw new RangeError('lz4 frame needs a dictionary');
  return end;
}

/**
 * Decodes one LZ4 block, `src[from, to)`, into `dst` at `at`; returns where the output ends. A sequence is a token
 * (literal and match length nibbles), extra length bytes, the literals, a 2-byte offset and the match; the last
 * sequence has literals only. Every read stays below `to` and every write below `dst.length`.
 */
function decodeBlock(src: Uint8Array, from: number, to: number, dst: Uint8Array, at: number): number {
  let s = from;
  let d = at;
  const damaged = (what: string) => new RangeError(`lz4 block damaged: ${what}`);
  while (s < to) {
    const token = src[s++]!;
    let literals = token >> 4;
    if (literals === 15) {
      let more: number;
      do {
        if (s >= to) throw damaged('literal length runs past the block');
        more = src[s++]!;
        literals += more;
      } while (more === 255);
    }
    if (literals > to - s) throw damaged('literals run past the block');
    if (literals > dst.length - d) throw damaged('more output than the frame holds');
    if (literals < 16) for (let i = 0; i < literals; i++) dst[d++] = src[s++]!;
    else {
      dst.set(src.subarray(s, s + literals), d);
      s += literals;
      d += literals;
    }
    if (s === to) break; // the last sequence: literals only
    if (s + 2 > to) throw damaged('match offset runs past the block');
    const offset = src[s]! | (src[s + 1]! << 8);
    s += 2;
    if (offset === 0 || offset > d) throw damaged(`match offset ${offset} before the start of the output`);
    let length = (token & 15) + 4;
    if ((token & 15) === 15) {
      let more: number;
      do {
        if (s >= to) throw damaged('match length runs past the block');
        more = src[s++]!;
        length += more;
      } while (more === 255);
    }
    if (length > dst.length - d) throw damaged('more output than the frame holds');
    let source = d - offset;
    if (offset >= length) {
      dst.copyWithin(d, source, source + length);
      d += length;
    } else {
      // Overlapping: the match repeats bytes it is writing, so byte by byte.
      for (let i = 0; i < length; i++) dst[d++] = dst[source++]!;
    }
  }
  return d;
}

let codecs: Promise<Codecs> | undefined;

/** `@vlink/bag-mcap`'s chunk codecs (zstd) with lz4 from {@link lz4Frame}, for the MCAP-based readers here. */
export function loadMcapCodecs(): Promise<Codecs> {
  codecs ??= loadCodecs().then((base) => Object.freeze({ ...base, lz4: { decompress: lz4Frame } }));
  return codecs;
}
