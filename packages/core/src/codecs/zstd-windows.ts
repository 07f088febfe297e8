import { BagError } from '../errors.js';

/**
 * The largest window a zstd frame may ask for: zstd's own decoder refuses more by default (`ZSTD_WINDOWLOG_LIMIT_DEFAULT`,
 * 2^27 bytes) unless told to accept long-distance windows, and no writer of the formats we read asks for them.
 */
export const MAX_ZSTD_WINDOW = 2 ** 27;

/** Reads `length` bytes at `offset` of the stream, fewer where it ends. */
export type ZstdSource = (offset: number, length: number) => Uint8Array;

const MAGIC = 0xfd2fb528;
const SKIPPABLE_MIN = 0x184d2a50;
const SKIPPABLE_MAX = 0x184d2a5f;
/** The most frames walked: a stream of empty frames cannot keep the walk going for long. */
const MAX_FRAMES = 1_000_000;

/**
 * Refuses a zstd stream (of `size` bytes) with a frame whose header asks for a window larger than `maxWindow`, before
 * a decoder sees it: `fzstd` allocates the window a frame header declares, so one damaged or hostile byte in it made
 * an 8-byte file allocate 963 MiB (fuzz `foreign --seed 1207`, case 18, a rosbag2 `.db3.zstd`). Walks the frames and
 * their block headers only (RFC 8878 §3.1), reading a few bytes per block; stops quietly where the structure ends or
 * breaks (the decoder then says what is wrong). Throws `LIMIT_REACHED`.
 */
export function checkZstdWindows(read: ZstdSource, size: number, maxWindow = MAX_ZSTD_WINDOW, file?: string): void {
  let at = 0;
  for (let frames = 0; frames < MAX_FRAMES && at + 8 <= size; frames++) {
    const head = read(at, 18);
    if (head.length < 8) return;
    const magic = u32(head, 0);
    if (magic >= SKIPPABLE_MIN && magic <= SKIPPABLE_MAX) {
      at += 8 + u32(head, 4);
      continue;
    }
    if (magic !== MAGIC) return;
    const frame = frameHeader(head);
    if (frame === undefined) return;
    if (frame.window > maxWindow)
      throw new BagError(
        'LIMIT_REACHED',
        `a zstd frame at byte ${at} asks for a ${mib(frame.window)} window, more than the ${mib(maxWindow)} zstd's own decoder accepts`,
        { ...(file === undefined ? {} : { file }), offset: at },
      );
    at += frame.headerLength;
    // The blocks: a 3-byte header each (last flag, type, size); an RLE block holds one byte, the others `size`.
    for (let last = false; !last; ) {
      const block = read(at, 3);
      if (block.length < 3) return;
      const header = block[0]! | (block[1]! << 8) | (block[2]! << 16);
      last = (header & 1) === 1;
      const type = (header >> 1) & 3;
      if (type === 3) return; // reserved: damage, the decoder's to report
      at += 3 + (type === 1 ? 1 : header >>> 3);
      if (at > size) return;
    }
    if (frame.checksum) at += 4;
  }
}

/** A frame header's length, the window it asks for and whether a checksum follows the frame; undefined if unusable. */
function frameHeader(head: Uint8Array): { headerLength: number; window: number; checksum: boolean } | undefined {
  if (head.length < 6) return undefined;
  const descriptor = head[4]!;
  const sizeFlag = descriptor >> 6;
  const singleSegment = (descriptor >> 5) & 1;
  const dictionaryBytes = [0, 1, 2, 4][descriptor & 3]!;
  const sizeBytes = [singleSegment, 2, 4, 8][sizeFlag]!;
  const sizeAt = 5 + (singleSegment ? 0 : 1) + dictionaryBytes;
  const headerLength = sizeAt + sizeBytes;
  if (head.length < headerLength) return undefined;
  let window: number;
  if (!singleSegment) {
    const byte = head[5]!;
    const base = 2 ** (10 + (byte >> 3));
    window = base + (base / 8) * (byte & 7);
  } else {
    // A single-segment frame's window is its content size.
    let content = 0;
    for (let i = sizeBytes - 1; i >= 0; i--) content = content * 256 + head[sizeAt + i]!;
    window = content + (sizeBytes === 2 ? 256 : 0);
  }
  return { headerLength, window, checksum: ((descriptor >> 2) & 1) === 1 };
}

function u32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

const mib = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`;
