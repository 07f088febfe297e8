import { closeSync, fstatSync, openSync, readSync, statfsSync, writeSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BagError } from '@vlink/bag-core';
import { checkZstdWindows, concatBytes, type PrivateTempDir, privateTempDir } from '@vlink/bag-core/internal';
import type { Codecs } from '@vlink/bag-mcap';
import { Decompress } from 'fzstd';
import type { Ros2Metadata } from './metadata-yaml.js';

/**
 * rosbag2's own compression, as `metadata.yaml` states it (`compression_mode`, `compression_format`): `file` — every
 * storage file compressed as a whole (`x.db3.zstd`, `x.mcap.zstd`); `message` — every message's bytes compressed on
 * their own, inside an ordinary storage file. (`storage`-level compression, MCAP's zstd chunks, needs nothing here:
 * the metadata says none.) zstd is the only format rosbag2 has a plugin for.
 */
export type Ros2Compression = 'file' | 'message' | undefined;

export function compressionOf(metadata: Ros2Metadata | undefined, file: string): Ros2Compression {
  const mode = (metadata?.compressionMode ?? '').toLowerCase();
  if (mode === '' || mode === 'none') return undefined;
  const format = (metadata?.compressionFormat ?? '').toLowerCase();
  if (format !== 'zstd')
    throw new BagError('UNSUPPORTED_FORMAT', `rosbag2 compression format "${format}" is not supported (zstd)`, {
      file,
    });
  if (mode !== 'file' && mode !== 'message')
    throw new BagError('UNSUPPORTED_FORMAT', `rosbag2 compression mode "${mode}" is not supported (file, message)`, {
      file,
    });
  return mode;
}

const READ_PIECE = 1024 * 1024;
/** Pieces read between two turns of the event loop: a server that opens such a bag stays responsive meanwhile. */
const PIECES_PER_TURN = 4;
/**
 * A copy may grow to `maxRatio` times the compressed file (or `minLimit` bytes, whichever is more) before it is
 * refused: rosbag2 storages compress 3–20× and zero-filled data a few hundred times, but a crafted file can claim
 * terabytes, and the copy goes to a shared temporary disk.
 */
export interface CopyLimits {
  maxRatio: number;
  minLimit: number;
  /** The copy stops when the temporary disk would have less than this left. */
  minFreeBytes: number;
}

const COPY_LIMITS: CopyLimits = { maxRatio: 250, minLimit: 4 * 1024 ** 3, minFreeBytes: 1024 ** 3 };

/**
 * A `file`-compressed storage file decompressed into a private temporary folder (SQLite and the MCAP reader need a
 * file they can seek in), streamed piece by piece so memory stays bounded whatever the file's size, and yielding to
 * the event loop as it goes. `remove()` deletes the copy; the reader calls it when it closes. rosbag2 writes these
 * frames with and without a declared size (rosbags streams them without), so this uses fzstd's streaming decoder
 * rather than the WebAssembly one, which needs it.
 */
export class DecompressedCopy {
  private constructor(
    readonly path: string,
    private readonly folder: PrivateTempDir,
  ) {}

  static async of(file: string, limits: CopyLimits = COPY_LIMITS): Promise<DecompressedCopy> {
    const folder = privateTempDir('vlink-rosbag2-');
    const path = join(folder.path, basename(file).replace(/\.zstd$/i, ''));
    let input: number | undefined;
    let output: number | undefined;
    try {
      input = openSync(file, 'r');
      const size = fstatSync(input).size;
      const fd = input;
      checkZstdWindows((offset, length) => readAt(fd, offset, length), size, undefined, file);
      const limit = Math.max(limits.minLimit, limits.maxRatio * size);
      const out = (output = openSync(path, 'w'));
      let written = 0;
      let checkedFreeAt = 0;
      const stream = new Decompress((data) => {
        written += data.byteLength;
        if (written > limit)
          throw new BagError('LIMIT_REACHED', `decompresses to more than ${limit} bytes: refused as a copy`, { file });
        if (written - checkedFreeAt > 64 * 1024 * 1024) {
          checkedFreeAt = written;
          if (freeBytes(folder.path) < limits.minFreeBytes)
            throw new BagError('LIMIT_REACHED', `the temporary directory ${tmpdir()} is running out of space`, {
              file,
            });
        }
        for (let at = 0; at < data.byteLength; ) at += writeSync(out, data, at);
      });
      const piece = new Uint8Array(READ_PIECE);
      for (let pieces = 1; ; pieces++) {
        const n = readSync(input, piece, 0, READ_PIECE, null);
        // The decoder keeps what it was given until a block is whole: hand it a copy, the piece is reused.
        stream.push(piece.slice(0, n), n === 0);
        if (n === 0) break;
        if (pieces % PIECES_PER_TURN === 0) await nextTurn();
      }
      if (written === 0 && fstatSync(input).size === 0) throw new RangeError('the file is empty');
    } catch (error) {
      if (output !== undefined) closeSync(output);
      output = undefined;
      folder.remove();
      throw BagError.wrap(error, 'CORRUPT_FILE', 'cannot decompress this zstd-compressed rosbag2 storage file', {
        file,
      });
    } finally {
      if (input !== undefined) closeSync(input);
      if (output !== undefined) closeSync(output);
    }
    return new DecompressedCopy(path, folder);
  }

  remove(): void {
    this.folder.remove();
  }
}

/**
 * One `message`-compressed payload. rosbag2 (`ZSTD_compress`) and rosbags declare the decompressed size in the frame
 * header: then the WebAssembly zstd of the MCAP codecs, several times faster than fzstd; without one, fzstd.
 */
export function decompressMessage(data: Uint8Array, codecs: Codecs): Uint8Array {
  const size = declaredSize(data);
  // A damaged or hostile header may declare any size: the WebAssembly decoder would allocate it up front, fzstd only
  // what the data really decodes to.
  return size === undefined || size > MAX_DECLARED
    ? decompressUpTo(data, MAX_MESSAGE)
    : codecs['zstd']!.decompress(data, size);
}

/**
 * The bytes a rosbag2 message carries. Decompressed where the bag says every message is compressed (`all`); and,
 * where it says nothing, wherever a `cdr` payload begins with zstd's magic (28 B5 2F FD): CDR begins with its
 * encapsulation header (00 0x), so such bytes are a compressed message whose bag lost the word saying so — a storage
 * file opened on its own, with neither its folder's metadata.yaml nor the copy newer rosbag2 keeps inside it. They
 * are never handed out as the payload; one that does not decompress fails the read with CORRUPT_DATA.
 */
export function messagePayload(
  data: Uint8Array,
  cdr: boolean,
  all: boolean,
  codecs: Codecs,
  where: { file: string; url: string },
): Uint8Array {
  if (!all && !(cdr && isZstdFrame(data))) return data;
  try {
    return decompressMessage(data, codecs);
  } catch (error) {
    throw BagError.wrap(error, 'CORRUPT_DATA', 'cannot decompress a zstd-compressed rosbag2 message', where);
  }
}

/** Whether bytes begin with the magic number of a zstd frame (RFC 8878 §3.1.1). */
export function isZstdFrame(data: Uint8Array): boolean {
  return data.byteLength >= 4 && data[0] === 0x28 && data[1] === 0xb5 && data[2] === 0x2f && data[3] === 0xfd;
}

const MAX_DECLARED = 256 * 1024 * 1024;
/** No message of a robot is this big; a payload that decompresses further is refused before it exhausts memory. */
const MAX_MESSAGE = 1024 * 1024 * 1024;

/** A zstd payload of any declared size or none, decoded by fzstd's stream: at most `limit` bytes, else LIMIT_REACHED. */
export function decompressUpTo(data: Uint8Array, limit: number): Uint8Array {
  checkZstdWindows((offset, length) => data.subarray(offset, offset + length), data.length);
  const parts: Uint8Array[] = [];
  let total = 0;
  const stream = new Decompress((part) => {
    total += part.byteLength;
    if (total > limit) throw new BagError('LIMIT_REACHED', `a message decompresses to more than ${limit} bytes`);
    parts.push(part);
  });
  stream.push(data, true);
  return concatBytes(parts, total);
}

/** The Frame_Content_Size of a zstd frame header (RFC 8878 §3.1.1.1), or undefined when the frame has none. */
export function declaredSize(data: Uint8Array): number | undefined {
  if (data.byteLength < 6 || !isZstdFrame(data)) return undefined;
  const descriptor = data[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag]!;
  if (sizeBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3]!;
  if (data.byteLength < at + sizeBytes) return undefined;
  const view = new DataView(data.buffer, data.byteOffset + at, sizeBytes);
  if (sizeBytes === 1) return view.getUint8(0);
  if (sizeBytes === 2) return view.getUint16(0, true) + 256;
  if (sizeBytes === 4) return view.getUint32(0, true);
  const big = view.getBigUint64(0, true);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : undefined;
}

/** Up to `length` bytes of the open file `fd` at `offset`. */
function readAt(fd: number, offset: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  return bytes.subarray(0, readSync(fd, bytes, 0, length, offset));
}

/** Bytes free for an unprivileged writer on the file system of `path`; Infinity where the runtime cannot tell. */
export function freeBytes(path: string): number {
  try {
    const stats = statfsSync(path);
    return Number(stats.bavail) * Number(stats.bsize);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
