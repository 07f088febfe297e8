import { BagError } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import { joinTime, type Block } from './blocks.js';
import { ChunkLoader, chunkRecordLength } from './chunk-loader.js';
import { MESSAGE_FIXED, Opcode, RECORD_PREFIX } from './constants.js';
import { asBagError, corrupt } from './corruption.js';
import { DuplicateChunks } from './duplicate-chunks.js';
import { FieldReader, parseRecord } from './record-parser.js';
import { RecordWindow } from './record-window.js';
import type { Channel, Schema, Statistics } from './records.js';

export interface MetadataLocation {
  name: string;
  offset: number;
  length: number;
}

export interface ScanResult {
  schemas: Map<number, Schema>;
  channels: Map<number, Channel>;
  blocks: Block[];
  metadata: MetadataLocation[];
  /** Computed from what was read. */
  statistics: Statistics;
  /** Where the data section ended (a DataEnd record, or where the readable bytes stopped). */
  dataEnd: number;
  /** Set when a tolerant scan stopped before `end`: the offset and why. */
  stoppedAt?: number;
  stopReason?: BagError;
  /** Chunks skipped because they did not decode (tolerant scans only). */
  damagedChunks: number;
  /** Loose message records skipped as damage ({@link ScanOptions.chunksHoldEveryMessage}; tolerant scans only). */
  strayMessages: number;
  /** Chunks skipped because they repeat an earlier chunk byte for byte, damage that copied them (tolerant scans only). */
  copiedChunks: number;
}

export interface ScanOptions {
  codecs: Codecs;
  validateCrcs: boolean;
  /** Stop quietly at truncated or damaged bytes instead of throwing (recovering an unfinished file). */
  tolerant: boolean;
  /**
   * The writer puts every message in a chunk once it chunks at all (VLink's `.vcap`): a loose message record after
   * a chunk is then damage, not data. A flipped bit turns a message index's opcode (7) into a message's (5), and the
   * index's fields read as a message of a real channel at a real time, which no chunk CRC covers (found by fuzzing).
   */
  chunksHoldEveryMessage?: boolean;
  file?: string;
}

/**
 * Reads the data section in [start, end) record by record: schemas, channels, metadata locations, blocks (chunks
 * and spans of loose messages) and statistics. Chunks are decompressed to find the schemas, channels and messages
 * inside. Every record advances the scan by at least 9 bytes, so it always terminates.
 */
export function scanDataSection(readable: Readable, start: number, end: number, options: ScanOptions): ScanResult {
  const { file, tolerant } = options;
  const win = new RecordWindow(readable, start, end, file);
  const loader = new ChunkLoader(readable, options.codecs, options.validateCrcs, file);
  const schemas = new Map<number, Schema>();
  const channels = new Map<number, Channel>();
  const blocks: Block[] = [];
  const metadata: MetadataLocation[] = [];
  const counts = new Map<number, number>();
  let messageCount = 0;
  let minHi = 0,
    minLo = 0,
    maxHi = 0,
    maxLo = 0;
  let attachmentCount = 0;
  let chunkCount = 0;
  let damagedChunks = 0;
  let strayMessages = 0;
  let copiedChunks = 0;
  const seenChunks = tolerant ? new DuplicateChunks() : undefined;
  let dataEnd = end;
  let stoppedAt: number | undefined;
  let stopReason: BagError | undefined;

  // Per-block accumulators.
  let bCount = 0,
    bMinHi = 0,
    bMinLo = 0,
    bMaxHi = 0,
    bMaxLo = 0;
  let bChannels = new Set<number>();
  let spanStart = -1,
    spanEnd = -1;

  const message = (view: DataView, at: number) => {
    const cid = view.getUint16(at + 9, true);
    const lo = view.getUint32(at + 15, true);
    const hi = view.getUint32(at + 19, true);
    if (messageCount === 0 || hi < minHi || (hi === minHi && lo < minLo)) {
      minHi = hi;
      minLo = lo;
    }
    if (messageCount === 0 || hi > maxHi || (hi === maxHi && lo > maxLo)) {
      maxHi = hi;
      maxLo = lo;
    }
    if (bCount === 0 || hi < bMinHi || (hi === bMinHi && lo < bMinLo)) {
      bMinHi = hi;
      bMinLo = lo;
    }
    if (bCount === 0 || hi > bMaxHi || (hi === bMaxHi && lo > bMaxLo)) {
      bMaxHi = hi;
      bMaxLo = lo;
    }
    messageCount++;
    bCount++;
    bChannels.add(cid);
    counts.set(cid, (counts.get(cid) ?? 0) + 1);
  };
  const collect = (bytes: Uint8Array, view: DataView, at: number, length: number) => {
    const { record } = parseRecord(bytes, view, at, at + length);
    if (record.type === 'Schema' && !schemas.has(record.id))
      schemas.set(record.id, { ...record, data: record.data.slice() });
    else if (record.type === 'Channel' && !channels.has(record.id)) channels.set(record.id, record);
  };
  const resetBlock = () => {
    bCount = 0;
    bChannels = new Set();
  };
  const closeSpan = () => {
    if (spanStart < 0) return;
    blocks.push({
      kind: 'span',
      offset: spanStart,
      length: spanEnd - spanStart,
      startTime: joinTime(bMinHi, bMinLo),
      endTime: joinTime(bMaxHi, bMaxLo),
      channels: bChannels,
    });
    spanStart = -1;
    resetBlock();
  };
  const stop = (at: number, reason: BagError) => {
    if (!tolerant) throw reason;
    stoppedAt = at;
    stopReason = reason;
    dataEnd = at;
  };

  for (;;) {
    const at = win.pos;
    let length: number;
    try {
      length = win.next();
    } catch (error) {
      stop(at, error as BagError); // `next` throws BagErrors only
      break;
    }
    if (length === 0) break;
    if (length < 0) {
      stop(at, corrupt('file ends in the middle of a record', file, at));
      break;
    }
    const { buf, view } = win;
    const i = win.at;
    const opcode = buf[i]!;
    try {
      switch (opcode) {
        case Opcode.Message:
          if (length < RECORD_PREFIX + MESSAGE_FIXED) throw corrupt('message record is too short', file, at);
          if (options.chunksHoldEveryMessage && chunkCount > 0) {
            if (!tolerant) throw corrupt('a loose message record among chunks', file, at);
            strayMessages++;
            break;
          }
          if (spanStart < 0) {
            spanStart = at;
            resetBlock();
          }
          message(view, i);
          spanEnd = at + length;
          break;
        case Opcode.Chunk: {
          closeSpan();
          let records: ReturnType<typeof loader.decode>;
          try {
            records = loader.decode(buf, view, i, length, at);
          } catch (error) {
            if (!tolerant || (BagError.isInstance(error) && error.code === 'NOT_SUPPORTED')) throw error;
            damagedChunks++;
            break;
          }
          // Its messages were read once already: reading the copy would yield each of them twice.
          if (seenChunks?.copyOf(readable, { buf, at: i, length, offset: at }) !== undefined) {
            copiedChunks++;
            break;
          }
          resetBlock();
          const { bytes, view: rv, end: rend } = records;
          for (let p = records.start; p < rend; ) {
            const recordLength = chunkRecordLength(bytes, rv, p, rend, file, at);
            const op = bytes[p]!;
            if (op === Opcode.Message) message(rv, p);
            else if (op === Opcode.Schema || op === Opcode.Channel) collect(bytes, rv, p, recordLength);
            p += recordLength;
          }
          const chunk = records.chunk;
          blocks.push({
            kind: 'chunk',
            offset: at,
            length,
            startTime: bCount ? joinTime(bMinHi, bMinLo) : chunk.messageStartTime,
            endTime: bCount ? joinTime(bMaxHi, bMaxLo) : chunk.messageEndTime,
            channels: bChannels,
            compression: chunk.compression,
          });
          resetBlock();
          chunkCount++;
          break;
        }
        case Opcode.Schema:
        case Opcode.Channel:
          collect(buf, view, i, length);
          break;
        case Opcode.Metadata: {
          const r = new FieldReader(buf, view, i + RECORD_PREFIX, i + length);
          metadata.push({ name: r.string('metadata name'), offset: at, length });
          break;
        }
        case Opcode.Attachment:
          attachmentCount++;
          break;
        case Opcode.DataEnd:
        case Opcode.Footer:
          dataEnd = at;
          break;
        case Opcode.Header:
        case 0:
          throw corrupt(`unexpected opcode ${opcode} in the data section`, file, at);
        default:
          // Message indexes, and opcodes from future MCAP versions or private use: not needed here.
          break;
      }
    } catch (error) {
      stop(at, asBagError(error, file, at - i, 'bad record'));
      break;
    }
    if (opcode === Opcode.DataEnd || opcode === Opcode.Footer) break;
  }
  closeSpan();

  const channelMessageCounts = new Map<number, bigint>();
  for (const [id, n] of [...counts].sort((a, b) => a[0] - b[0])) channelMessageCounts.set(id, BigInt(n));
  const statistics: Statistics = {
    type: 'Statistics',
    messageCount: BigInt(messageCount),
    schemaCount: schemas.size,
    channelCount: channels.size,
    attachmentCount,
    metadataCount: metadata.length,
    chunkCount,
    messageStartTime: messageCount ? joinTime(minHi, minLo) : 0n,
    messageEndTime: messageCount ? joinTime(maxHi, maxLo) : 0n,
    channelMessageCounts,
  };
  const result: ScanResult = {
    schemas,
    channels,
    blocks,
    metadata,
    statistics,
    dataEnd,
    damagedChunks,
    strayMessages,
    copiedChunks,
  };
  if (stoppedAt !== undefined) {
    result.stoppedAt = stoppedAt;
    result.stopReason = stopReason!;
  }
  return result;
}
