import type { Codecs } from '../codecs.js';
import { MAX_UNCOMPRESSED_CHUNK, type ChunkRecords } from '../mcap/chunk-loader.js';
import { CHUNK_FIXED, MESSAGE_FIXED, Opcode, RECORD_PREFIX, TWO_32 } from '../mcap/constants.js';
import { FieldReader, parseRecord, readChunkHeader, RecordCorruption } from '../mcap/record-parser.js';
import type { Chunk } from '../mcap/records.js';
import type { InnerRecord } from './data-walk.js';

/** What could be taken out of a chunk that is cut short or does not decode as a whole. */
export interface SalvagedChunk {
  /** The chunk's header as stored (its lengths, sizes and CRC describe the original, not what was salvaged). */
  chunk: Chunk;
  /** The longest prefix of its records that decoded: `bytes[start..end)`. */
  records: ChunkRecords;
  /** The complete records of that prefix that parse, in order, up to the first broken one. */
  inner: InnerRecord[];
  /** Bytes of the chunk record that could not be used (cut or undecodable records, the broken record onwards). */
  lostBytes: number;
  /** The channel of a message whose record was cut or broken, when its header survived (a lost frame). */
  cutMessageChannel: number | undefined;
}

/**
 * Salvages the complete records of a chunk record whose bytes are `bytes` (from its opcode; the record may be cut
 * short, `bytes.length` below its stated length): an uncompressed chunk record by record up to the first broken one,
 * a compressed one by decoding the longest prefix the codec can (`decompressPrefix`: zstd block by block). Undefined
 * when not even the chunk header is there. Nothing here is verified by a CRC: callers use it only where the bytes are
 * known to be the writer's (a cut file) or where the chunk has no CRC to check them against.
 */
export function salvageChunk(bytes: Uint8Array, codecs: Codecs): SalvagedChunk | undefined {
  const header = parseChunkHeader(bytes);
  if (!header) return undefined;
  const { chunk, recordsAt } = header;
  const available = Math.max(0, Math.min(bytes.length - recordsAt, chunk.recordsLength));
  const stored = bytes.subarray(recordsAt, recordsAt + available);
  let plain: Uint8Array;
  if (chunk.compression === '') plain = stored;
  else {
    const codec = codecs[chunk.compression];
    const limit = Math.min(Number(chunk.uncompressedSize), MAX_UNCOMPRESSED_CHUNK);
    let decoded: Uint8Array | undefined;
    try {
      decoded = codec?.decompressPrefix?.(stored, limit);
    } catch {
      decoded = undefined;
    }
    plain = decoded ?? new Uint8Array(0);
  }
  const view = new DataView(plain.buffer, plain.byteOffset, plain.byteLength);
  const inner: InnerRecord[] = [];
  let p = 0;
  let cutMessageChannel: number | undefined;
  while (p < plain.length) {
    const rest = plain.length - p;
    const op = plain[p]!;
    if (rest < RECORD_PREFIX) break;
    const lo = view.getUint32(p + 1, true);
    const hi = view.getUint32(p + 5, true);
    const whole = hi === 0 && lo <= rest - RECORD_PREFIX;
    if (op === Opcode.Message) {
      if (!whole || lo < MESSAGE_FIXED) {
        if (rest >= RECORD_PREFIX + 2) cutMessageChannel = view.getUint16(p + 9, true);
        break;
      }
    } else if (op === Opcode.Schema || op === Opcode.Channel) {
      if (!whole) break;
      try {
        parseRecord(plain, view, p, p + RECORD_PREFIX + lo);
      } catch {
        break;
      }
    } else if (op < 0x80 || !whole) break;
    inner.push({ opcode: op, at: p, length: RECORD_PREFIX + lo });
    p += RECORD_PREFIX + lo;
  }
  const used = p;
  const records: ChunkRecords = { bytes: plain, view, start: 0, end: used, chunk };
  // What was used is the header plus the stored bytes that held the kept records (all of them for a compressed chunk
  // whose prefix decoded only in part: its lost share is not known byte for byte, so the undecoded rest counts).
  const statedLength = RECORD_PREFIX + Number(header.contentLength);
  const keptStored = chunk.compression === '' ? used : used === plain.length ? available : 0;
  const lostBytes = Math.max(0, Math.min(bytes.length, statedLength) - recordsAt - keptStored);
  return { chunk, records, inner, lostBytes, cutMessageChannel };
}

/** The chunk header fields, or undefined when the bytes stop inside them or they cannot be a chunk's. */
function parseChunkHeader(bytes: Uint8Array): { chunk: Chunk; recordsAt: number; contentLength: number } | undefined {
  if (bytes.length < RECORD_PREFIX + CHUNK_FIXED || bytes[0] !== Opcode.Chunk) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const contentHi = view.getUint32(5, true);
  if (contentHi > 0x1fffff) return undefined;
  const contentLength = contentHi * TWO_32 + view.getUint32(1, true);
  // No codec has a longer name: a longer one means these are not a chunk header's bytes.
  if (view.getUint32(RECORD_PREFIX + 28, true) > 64) return undefined;
  let chunk: Chunk;
  try {
    // Read up to the records only: they may be cut short.
    chunk = readChunkHeader(new FieldReader(bytes, view, RECORD_PREFIX, bytes.length));
  } catch (error) {
    if (error instanceof RecordCorruption) return undefined;
    throw error;
  }
  if (RECORD_PREFIX + contentLength !== chunk.recordsOffset + chunk.recordsLength) return undefined;
  return { chunk, recordsAt: chunk.recordsOffset, contentLength };
}
