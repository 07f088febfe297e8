import { type ByteWriter, setTime } from './byte-writer.js';
import { CHUNK_FIXED, Opcode, TWO_32 } from './constants.js';

/** Header size of an uncompressed chunk: prefix (9) + fixed fields + an empty compression string. */
export const PLAIN_CHUNK_HEADER = 9 + CHUNK_FIXED;

export interface ChunkHeaderFields {
  startRel: number;
  endRel: number;
  uncompressedSize: number;
  crc: number;
  compression: string;
  /** Bytes of (possibly compressed) records that follow the header. */
  recordsLength: number;
}

/** The chunk record up to its records; the record length counts the records that follow. */
export function writeChunkHeader(b: ByteWriter, baseHi: number, baseLo: number, f: ChunkHeaderFields): void {
  const at = b.beginRecord(Opcode.Chunk);
  b.reserve(16);
  setTime(b.view, b.length, baseHi, baseLo, f.startRel);
  setTime(b.view, b.length + 8, baseHi, baseLo, f.endRel);
  b.length += 16;
  b.u64(f.uncompressedSize);
  b.u32(f.crc);
  b.string(f.compression);
  b.u64(f.recordsLength);
  const content = b.length - at - 9 + f.recordsLength;
  b.view.setUint32(at + 1, content >>> 0, true);
  b.view.setUint32(at + 5, Math.floor(content / TWO_32), true);
}

/** A message index record from interleaved (time offset, record offset) pairs `entries[0..count)`. */
export function writeMessageIndex(
  b: ByteWriter,
  channelId: number,
  entries: Float64Array,
  count: number,
  baseHi: number,
  baseLo: number,
): void {
  const at = b.beginRecord(Opcode.MessageIndex);
  b.u16(channelId);
  b.u32(count * 8);
  b.reserve(count * 8);
  const v = b.view;
  let p = b.length;
  for (let i = 0; i < count; i += 2) {
    setTime(v, p, baseHi, baseLo, entries[i]!);
    const offset = entries[i + 1]!;
    v.setUint32(p + 8, offset >>> 0, true);
    v.setUint32(p + 12, Math.floor(offset / TWO_32), true);
    p += 16;
  }
  b.length = p;
  b.endRecord(at);
}
