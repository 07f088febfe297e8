import type { Codecs } from '../codecs.js';
import { ByteWriter } from '../mcap/byte-writer.js';
import { Opcode } from '../mcap/constants.js';
import { crc32 } from '../mcap/crc32.js';
import { parseRecord } from '../mcap/record-parser.js';
import type { Channel, Chunk, ChunkIndex, Schema } from '../mcap/records.js';
import type { BufferedSink } from './buffered-sink.js';
import type { InnerRecord, WalkItem } from './data-walk.js';
import type { KeptDefinitions } from './kept-definitions.js';

/** What rebuilding a chunk needs from the rebuild around it. */
export interface ChunkRebuildContext {
  readonly out: BufferedSink;
  /** Reused for the re-encoded chunk header and the message indexes (and by `definitions`). */
  readonly scratch: ByteWriter;
  readonly codecs: Codecs;
  readonly definitions: KeptDefinitions;
  /** A message was kept: counted for the statistics and its channel's `VLinkChannel_*` record. */
  countMessage(channelId: number, time: bigint, payload: number): void;
  /** A message was left out (its channel record was lost). */
  dropMessage(length: number, channelId?: number): void;
  /**
   * A message whose channel record is not (yet) in the data: defines it from the summary, when the summary has it,
   * writing its schema and channel records (outside chunks) ahead of what comes next. False when nothing knows it.
   */
  recoverChannel(channelId: number): boolean;
}

export type ChunkWalkItem = Extract<WalkItem, { kind: 'chunk' }>;

/**
 * Writes a decoded chunk to `ctx.out`: byte for byte when all its records are kept and its header times agree with its
 * messages, else re-encoded (dropped records left out, times corrected), followed by fresh message indexes. Returns
 * the chunk's index entry, or `undefined` when no message was left and the remaining records went out loose.
 */
export function rebuildChunk(
  item: ChunkWalkItem,
  ctx: ChunkRebuildContext,
  /** Always re-encode (a salvaged chunk: its stored header and lengths describe more than `inner`). */
  reencode = false,
): Omit<ChunkIndex, 'type'> | undefined {
  const { chunk, records, inner } = item;
  const rb = records.bytes;
  const rv = records.view;
  const channels = ctx.definitions.channels;
  // Decide record by record; `rebuilt` collects the records when anything had to change.
  let rebuilt: ByteWriter | undefined = reencode
    ? new ByteWriter(Math.max(64, records.end - records.start))
    : undefined;
  const entries = new Map<number, Array<[bigint, number]>>();
  const pendingTallies: Array<[number, bigint, number]> = [];
  let min = 0n;
  let max = 0n;
  let messages = 0;
  const startRebuild = (upTo: InnerRecord) => {
    rebuilt = new ByteWriter(records.end);
    rebuilt.raw(rb.subarray(records.start, upTo.at));
  };
  for (const r of inner) {
    const raw = rb.subarray(r.at, r.at + r.length);
    if (r.opcode === Opcode.Message) {
      const channelId = rv.getUint16(r.at + 9, true);
      if (!channels.has(channelId) && !ctx.recoverChannel(channelId)) {
        if (!rebuilt) startRebuild(r);
        ctx.dropMessage(r.length, channelId);
        continue;
      }
      const time = rv.getBigUint64(r.at + 15, true);
      const offset = rebuilt ? rebuilt.length : r.at - records.start;
      let list = entries.get(channelId);
      if (!list) entries.set(channelId, (list = []));
      list.push([time, offset]);
      if (messages === 0 || time < min) min = time;
      if (messages === 0 || time > max) max = time;
      messages++;
      pendingTallies.push([channelId, time, r.length - 31]);
      rebuilt?.raw(raw);
      continue;
    }
    if (r.opcode === Opcode.Schema || r.opcode === Opcode.Channel) {
      const kept = ctx.definitions.define(parseRecord(rb, rv, r.at, r.at + r.length).record as Schema | Channel);
      if (kept === 'keep') rebuilt?.raw(raw);
      else {
        if (!rebuilt) startRebuild(r);
        if (kept !== 'drop') rebuilt!.raw(kept);
      }
      continue;
    }
    rebuilt?.raw(raw);
  }
  for (const [channelId, time, size] of pendingTallies) ctx.countMessage(channelId, time, size);
  if (messages === 0) {
    // Nothing left to index: keep the schema and channel records outside a chunk.
    ctx.out.write(rebuilt ? rebuilt.view8() : rb.subarray(records.start, records.end));
    return undefined;
  }
  const timesAgree = chunk.messageStartTime === min && chunk.messageEndTime === max;
  const offset = ctx.out.position();
  let length: number;
  let compression = chunk.compression;
  let storedSize = chunk.recordsLength;
  let uncompressedSize = Number(chunk.uncompressedSize);
  if (!rebuilt && timesAgree) {
    ctx.out.write(item.buf.subarray(item.at, item.at + item.length));
    length = item.length;
  } else {
    // Re-encode: new records (recompressed when the codec can write), or only the header with corrected times.
    let stored: Uint8Array;
    let crc = chunk.uncompressedCrc;
    if (rebuilt) {
      const plain = rebuilt.view8();
      uncompressedSize = plain.length;
      const codec = compression ? ctx.codecs[compression] : undefined;
      stored = codec?.compress ? codec.compress(plain, 1) : plain;
      if (!codec?.compress) compression = '';
      // A checksummed file stays checksummed; a salvaged chunk gets one (nothing else vouches for its bytes any more).
      if (crc !== 0 || reencode) crc = crc32(plain);
    } else stored = item.buf.subarray(chunk.recordsOffset, chunk.recordsOffset + chunk.recordsLength);
    storedSize = stored.length;
    const w = ctx.scratch;
    w.reset();
    encodeChunk(
      w,
      { ...chunk, messageStartTime: min, messageEndTime: max, uncompressedCrc: crc, compression },
      uncompressedSize,
      stored,
    );
    ctx.out.write(w.view8());
    length = w.length;
  }
  const { indexOffsets, indexLength } = writeMessageIndexes(ctx, entries);
  return {
    messageStartTime: min,
    messageEndTime: max,
    chunkStartOffset: BigInt(offset),
    chunkLength: BigInt(length),
    messageIndexOffsets: indexOffsets,
    messageIndexLength: BigInt(indexLength),
    compression,
    compressedSize: BigInt(storedSize),
    uncompressedSize: BigInt(uncompressedSize),
  };
}

/** Fresh message indexes right after the chunk, sorted by channel id as writers do. */
function writeMessageIndexes(
  ctx: ChunkRebuildContext,
  entries: Map<number, Array<[bigint, number]>>,
): { indexOffsets: Map<number, bigint>; indexLength: number } {
  const indexOffsets = new Map<number, bigint>();
  const indexStart = ctx.out.position();
  const w = ctx.scratch;
  w.reset();
  for (const id of [...entries.keys()].sort((a, b) => a - b)) {
    indexOffsets.set(id, BigInt(indexStart + w.length));
    const list = entries.get(id)!;
    const at = w.beginRecord(Opcode.MessageIndex);
    w.u16(id);
    w.u32(list.length * 16);
    for (const [time, at2] of list) {
      w.u64big(time);
      w.u64(at2);
    }
    w.endRecord(at);
  }
  ctx.out.write(w.view8());
  return { indexOffsets, indexLength: w.length };
}

/** A whole chunk record with bigint times. */
function encodeChunk(w: ByteWriter, chunk: Chunk, uncompressedSize: number, stored: Uint8Array): void {
  const at = w.beginRecord(Opcode.Chunk);
  w.u64big(chunk.messageStartTime);
  w.u64big(chunk.messageEndTime);
  w.u64(uncompressedSize);
  w.u32(chunk.uncompressedCrc);
  w.string(chunk.compression);
  w.u64(stored.length);
  w.raw(stored);
  w.endRecord(at);
}
