import { BagError } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import type { Block } from './blocks.js';
import { MESSAGE_FIXED, Opcode, RECORD_PREFIX } from './constants.js';
import { asBagError, corrupt } from './corruption.js';
import { crc32 } from './crc32.js';
import { parseRecord } from './record-parser.js';
import type { Chunk } from './records.js';
import { zstdContentSize } from './zstd-frame.js';

/** Uncompressed chunk records: `bytes[start..end)`, valid until the loader's next call. */
export interface ChunkRecords {
  bytes: Uint8Array;
  view: DataView;
  start: number;
  end: number;
  chunk: Chunk;
}

/**
 * The length (prefix included) of the record at `p` of a chunk's records that end at `end`, once it is known to fit
 * in them and, for a message, to hold its fixed fields: what every walk over a chunk's records asks first (the
 * message cursor, the scan at open, `check`/`fix`), one rule for all of them. Throws `CORRUPT_FILE` at `offset`, the
 * chunk's offset in the file (a position inside decompressed records means nothing in the file).
 */
export function chunkRecordLength(
  bytes: Uint8Array,
  view: DataView,
  p: number,
  end: number,
  file: string | undefined,
  offset: number,
): number {
  if (end - p < RECORD_PREFIX) throw corrupt('chunk ends in the middle of a record', file, offset);
  const content = view.getUint32(p + 1, true);
  if (view.getUint32(p + 5, true) !== 0 || content > end - p - RECORD_PREFIX)
    throw corrupt('chunk record runs past the chunk', file, offset);
  if (bytes[p] === Opcode.Message && content < MESSAGE_FIXED)
    throw corrupt('message record is too short', file, offset);
  return RECORD_PREFIX + content;
}

/** No real compressed chunk is this big uncompressed; a larger claim is corruption, not a reason to allocate. */
export const MAX_UNCOMPRESSED_CHUNK = 1024 * 1024 * 1024;
/** zstd's best case (RLE blocks) stays far below this ratio; lz4 below 255. */
const MAX_RATIO = 32768;
/** An lz4 sequence encodes at most 255 more bytes per stored byte. */
const MAX_LZ4_RATIO = 256;

/**
 * Reads chunk records and returns their uncompressed records through the codec map, with bounds checks on every
 * length before anything is allocated and the CRC checked when the file has one.
 */
export class ChunkLoader {
  private buf = new Uint8Array(0);

  constructor(
    private readonly readable: Readable,
    private readonly codecs: Codecs,
    private readonly validateCrcs: boolean,
    private readonly file: string | undefined,
  ) {}

  /** Loads the chunk record occupying [offset, offset + length) of the file. */
  load(offset: number, length: number): ChunkRecords {
    if (!(offset >= 0 && length > 0 && offset + length <= this.readable.size())) {
      throw corrupt(`chunk of ${length} bytes lies outside the file`, this.file, offset);
    }
    if (this.buf.length < length)
      this.buf = new Uint8Array(Math.max(length, Math.min(this.buf.length * 2, MAX_UNCOMPRESSED_CHUNK)));
    const bytes = this.readable.read(offset, length, this.buf);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (bytes[0] !== Opcode.Chunk) throw corrupt('expected a chunk record', this.file, offset);
    return this.decode(bytes, view, 0, length, offset);
  }

  /**
   * Loads a block's chunk record. One that a chunk index located must be the chunk that index describes: a chunk copied
   * over another of the same length decodes (its CRC is its own) and would be read as the other, its messages a
   * second time and out of place; its header's times tell it (found by hand, after fuzz `.vcapx --seed 1407`, case
   * 958: 100 frames read, 11 of them twice and 11 missing, no error).
   */
  loadBlock(block: Block): ChunkRecords {
    const records = this.load(block.offset, block.length);
    const { chunk } = records;
    if (block.indexed && (chunk.messageStartTime !== block.startTime || chunk.messageEndTime !== block.endTime))
      throw corrupt(
        `chunk is not the one its index describes: its messages span ${chunk.messageStartTime}..${chunk.messageEndTime} ns, the index says ${block.startTime}..${block.endTime} (damage; run check or fix)`,
        this.file,
        block.offset,
      );
    return records;
  }

  /** Decodes the chunk record at `bytes[at..at+length)`, which sits at `fileOffset` in the file. */
  decode(bytes: Uint8Array, view: DataView, at: number, length: number, fileOffset: number): ChunkRecords {
    let chunk: Chunk;
    try {
      const parsed = parseRecord(bytes, view, at, at + length);
      if (parsed.record.type !== 'Chunk' || parsed.length !== length)
        throw corrupt('chunk record length does not match its index', this.file, fileOffset);
      chunk = parsed.record;
    } catch (error) {
      throw asBagError(error, this.file, fileOffset - at, 'bad chunk');
    }
    const stored = bytes.subarray(chunk.recordsOffset, chunk.recordsOffset + chunk.recordsLength);
    let records: Uint8Array;
    if (chunk.compression === '') {
      // Already bounded by the file: nothing is allocated from the claim.
      if (chunk.uncompressedSize !== BigInt(stored.length))
        throw corrupt('uncompressed chunk size does not match its records', this.file, fileOffset);
      records = stored;
    } else {
      if (chunk.uncompressedSize > BigInt(MAX_UNCOMPRESSED_CHUNK)) {
        throw corrupt(`chunk claims ${chunk.uncompressedSize} uncompressed bytes`, this.file, fileOffset);
      }
      const size = Number(chunk.uncompressedSize);
      const codec = this.codecs[chunk.compression];
      if (!codec) {
        throw new BagError('NOT_SUPPORTED', `chunk compression "${chunk.compression}" is not supported`, {
          ...(this.file === undefined ? {} : { file: this.file }),
          offset: fileOffset,
        });
      }
      const ratio = chunk.compression === 'lz4' ? MAX_LZ4_RATIO : MAX_RATIO;
      if (size > stored.length * ratio + 4096)
        throw corrupt(`chunk claims an impossible ${chunk.compression} ratio`, this.file, fileOffset);
      if (chunk.compression === 'zstd') {
        // The frames say how big they decompress; a claim that disagrees is refused before the codec allocates it.
        const declared = zstdContentSize(stored);
        if (declared === 'invalid') throw corrupt('zstd chunk is not a sequence of zstd frames', this.file, fileOffset);
        if (declared !== 'unknown' && declared !== size)
          throw corrupt(`zstd chunk holds ${declared} bytes, its record claims ${size}`, this.file, fileOffset);
      }
      try {
        records = size === 0 ? new Uint8Array(0) : codec.decompress(stored, size);
      } catch (error) {
        throw corrupt(`${chunk.compression} chunk does not decompress`, this.file, fileOffset, error);
      }
      if (records.length !== size)
        throw corrupt(
          `${chunk.compression} chunk decompressed to ${records.length} bytes, not ${size}`,
          this.file,
          fileOffset,
        );
    }
    if (this.validateCrcs && chunk.uncompressedCrc !== 0 && crc32(records) !== chunk.uncompressedCrc) {
      throw corrupt('chunk CRC mismatch', this.file, fileOffset);
    }
    return {
      bytes: records,
      view: new DataView(records.buffer, records.byteOffset, records.byteLength),
      start: 0,
      end: records.length,
      chunk,
    };
  }
}
