import { BagError } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import { ChunkLoader, chunkRecordLength, type ChunkRecords } from '../mcap/chunk-loader.js';
import {
  CHUNK_FIXED,
  DATA_END_RECORD,
  FOOTER_RECORD,
  MESSAGE_FIXED,
  Opcode,
  RECORD_PREFIX,
  TWO_32,
} from '../mcap/constants.js';
import { asBagError, corrupt } from '../mcap/corruption.js';
import { parseRecord } from '../mcap/record-parser.js';
import { RecordWindow } from '../mcap/record-window.js';
import { readFooter } from '../mcap/summary.js';
import type { Chunk, McapRecord } from '../mcap/records.js';
import { salvageChunk, type SalvagedChunk } from './chunk-salvage.js';
import { KNOWN_OPCODES, pastZeroedRecords } from './record-starts.js';

/** One record inside a decoded chunk: `records.bytes[at..at+length)`. */
export interface InnerRecord {
  opcode: number;
  at: number;
  length: number;
}

/** Where a record's bytes are: `buf[at..at+length)`, with `view` over the same buffer. Valid until the next item. */
export interface RecordBytes {
  buf: Uint8Array;
  view: DataView;
  at: number;
}

export type WalkItem =
  /** A top-level record that parses (`parsed` is absent for messages, which are only length-checked). */
  | ({ kind: 'record'; opcode: number; offset: number; length: number; parsed?: McapRecord } & RecordBytes)
  /** A chunk that decodes (compression, CRC when present) and whose records all parse. */
  | ({
      kind: 'chunk';
      offset: number;
      length: number;
      chunk: Chunk;
      records: ChunkRecords;
      inner: InnerRecord[];
    } & RecordBytes)
  /** Bytes that cannot be used: a chunk that does not decode (`chunk`), a record that does not parse, or a stretch of
   * garbage / a truncated tail up to the next recognisable record. */
  | {
      kind: 'damaged';
      offset: number;
      length: number;
      chunk: boolean;
      reason: BagError;
      /** A chunk dropped whole although its records parse (a CRC mismatch): its messages per channel. */
      lostMessages?: Map<number, number>;
    }
  /**
   * `salvage` only: a chunk cut short (a truncated file) or, without a CRC, one that does not decode as a whole; what
   * could be taken out of it. `length` is the bytes it spans in the file.
   */
  | { kind: 'salvaged'; offset: number; length: number; salvaged: SalvagedChunk; reason: BagError }
  /** A DataEnd or Footer record: the data section ends here. */
  | ({ kind: 'end'; offset: number; length: number; opcode: number } & RecordBytes);

export interface WalkOptions {
  codecs: Codecs;
  /** Check non-zero chunk CRCs. */
  validateCrcs: boolean;
  /**
   * After bytes that cannot be parsed (a garbled length, a truncated record), search forward for the next chunk,
   * metadata or DataEnd record that validates completely, and continue there. Without it the walk ends at the damage.
   */
  resync: boolean;
  /**
   * Take the complete records out of chunks that are cut short, and out of chunks without a CRC that do not decode as a
   * whole (`salvaged` items), and count the messages of chunks dropped for a CRC mismatch (`lostMessages`).
   */
  salvage?: boolean;
  file?: string;
}

/** The most of a cut record read into memory to salvage it. */
const MAX_SALVAGE_READ = 512 * 1024 * 1024;

/**
 * Visits every record of the data section in [start, end) in file order, classifying what is usable and what is
 * damaged, for `check` and for the repair rewrite. Unlike the reader's scan it never stops at a damaged chunk whose
 * length is intact, and with `resync` it finds its way past garbage too. Every length is bounded by `end` (itself
 * bounded by the file size) before anything is allocated; each step advances by at least one byte, so it terminates.
 */
export function walkDataSection(
  readable: Readable,
  start: number,
  end: number,
  options: WalkOptions,
  visit: (item: WalkItem) => void,
): void {
  const { file } = options;
  const loader = new ChunkLoader(readable, options.codecs, options.validateCrcs, file);
  let win = new RecordWindow(readable, start, end, file);
  for (;;) {
    const at = win.pos;
    let length: number;
    let bad: BagError | undefined;
    try {
      length = win.next();
    } catch (error) {
      length = -1;
      bad = error as BagError; // `next` throws BagErrors only
    }
    if (length === 0) return;
    if (length > 0) {
      const { buf, view } = win;
      const i = win.at;
      const opcode = buf[i]!;
      const bytes = { buf, view, at: i };
      const record: WholeRecord = { buf, view, i, length, offset: at };
      if (opcode === Opcode.DataEnd || opcode === Opcode.Footer) {
        // An end record of another size than its fields' may be a damaged opcode, whose length is then another
        // record's: when a chunk that decodes follows it in the data section, the data goes on (found by fuzzing: a
        // message index's opcode 7 flipped into DataEnd's 15 ended the walk, and the repair lost the 12 messages a
        // reader still read in the chunks after it). A sound end record is not searched past.
        const size = opcode === Opcode.DataEnd ? DATA_END_RECORD : FOOTER_RECORD;
        const after =
          options.resync && length !== size && at + length < end
            ? findNextRecord(readable, loader, at + 1, end, file, { chunksOnly: true })
            : -1;
        if (after < 0) {
          visit({ kind: 'end', offset: at, length, opcode, ...bytes });
          return;
        }
        const reason = corrupt(
          `end record (opcode ${opcode}) of ${length} bytes before the chunk at ${after}`,
          file,
          at,
        );
        visit({ kind: 'damaged', offset: at, length: after - at, chunk: false, reason });
        win = new RecordWindow(readable, after, end, file);
        continue;
      }
      if (opcode === Opcode.Chunk) {
        const decoded = decodeChunk(loader, record, file);
        if (BagError.isInstance(decoded)) {
          if (decoded.code === 'NOT_SUPPORTED') throw decoded;
          visit(damagedChunk(record, decoded, options, file));
        } else visit({ kind: 'chunk', offset: at, length, ...decoded, ...bytes });
        continue;
      }
      if (opcode !== 0 && opcode !== Opcode.Header) {
        const checked = checkRecord(record, file);
        // A record's length may be damaged while its fields still parse (MCAP lets records carry bytes past their
        // fields): when a chunk that decodes on its own starts inside the extent of a record that does not parse,
        // of an unknown opcode, or of a message index longer than its entries, that length is wrong and the walk
        // resumes at the chunk (found by fuzzing: a message index grown from 22 to 4,118 bytes swallowed the chunk
        // after it, 11 messages a reader still read). Sound records are not searched (check() walks every index),
        // nor attachments and messages, which may well hold a whole MCAP file.
        const inside =
          options.resync && suspectLength(opcode, checked, length)
            ? findNextRecord(readable, loader, at + 1, end, file, { startsBefore: at + length, chunksOnly: true })
            : -1;
        if (inside > 0) {
          const reason = BagError.isInstance(checked)
            ? checked
            : corrupt(`record length ${length} runs into the chunk at ${inside}`, file, at);
          visit({ kind: 'damaged', offset: at, length: inside - at, chunk: false, reason });
          win = new RecordWindow(readable, inside, end, file);
        } else if (BagError.isInstance(checked))
          visit({ kind: 'damaged', offset: at, length, chunk: false, reason: checked });
        else visit({ kind: 'record', opcode, offset: at, length, ...(checked ? { parsed: checked } : {}), ...bytes });
        continue;
      }
      bad = corrupt(`unexpected opcode ${opcode} in the data section`, file, at);
      // Only its opcode byte may be damaged, or zeroed bytes hold whole records of opcode 0: where the lengths lead to
      // the start of a record, go on there, as a reader steps over them (found by fuzzing, files without chunks: one
      // zeroed opcode made the search for the next chunk skip every loose message after it, 42 a reader still read;
      // 2,205 zeroed bytes, 245 empty records, lost 70). The same for a second Header: one flipped bit turns a
      // Message (5) into one (1), and the repair lost the 12 loose messages after it (`.vcap --seed 1206`, case 2173).
      const resume = options.resync ? pastZeroedRecords(readable, at + length, end) : -1;
      if (resume >= 0) {
        visit({ kind: 'damaged', offset: at, length: resume - at, chunk: false, reason: bad });
        if (resume !== at + length) win = new RecordWindow(readable, resume, end, file);
        continue;
      }
    }
    bad ??= corrupt('data section ends in the middle of a record', file, at);
    const next = options.resync ? findNextRecord(readable, loader, at + 1, end, file) : -1;
    const stop = next < 0 ? end : next;
    // No CRC covers part of a chunk: the complete records of a cut one are the writer's only in a file cut short (a
    // crash), where nothing follows the cut. Where the file goes on (a record found after it, or the footer a finished
    // file ends with), the record's length is damaged and its bytes may be anyone's: salvaged, a message whose payload
    // ran into other bytes came back as good (found by fuzzing, .vcap --seed 1479 case 1298).
    const cutShort = next < 0 && !endsWithFooter(readable, start, file);
    const salvaged = options.salvage && cutShort ? salvageCut(readable, at, stop, options.codecs) : undefined;
    if (salvaged) visit({ kind: 'salvaged', offset: at, length: stop - at, salvaged, reason: bad });
    else visit({ kind: 'damaged', offset: at, length: stop - at, chunk: false, reason: bad });
    if (next < 0) return;
    win = new RecordWindow(readable, next, end, file);
  }
}

/** A record read whole: `buf[i, i + length)` (`view` over `buf`), at `offset` in the file. */
interface WholeRecord {
  buf: Uint8Array;
  view: DataView;
  i: number;
  length: number;
  offset: number;
}

/** A chunk record that is whole but does not decode: what `salvage` can still say about it or take out of it. */
function damagedChunk(chunk: WholeRecord, reason: BagError, options: WalkOptions, file: string | undefined): WalkItem {
  const { buf, view, i, length, offset } = chunk;
  const damaged: WalkItem = { kind: 'damaged', offset, length, chunk: true, reason };
  if (!options.salvage) return damaged;
  const crc = view.getUint32(i + RECORD_PREFIX + 24, true);
  if (crc === 0) {
    // Nothing to check the records against: keep what decodes, up to the first broken record.
    const salvaged = salvageChunk(buf.subarray(i, i + length), options.codecs);
    if (salvaged && salvaged.inner.length > 0) return { kind: 'salvaged', offset, length, salvaged, reason };
    return damaged;
  }
  // A CRC mismatch cannot say which record is wrong, so the chunk goes whole; its messages are counted as lost.
  const unchecked = decodeChunk(new ChunkLoader(EMPTY_READABLE, options.codecs, false, file), chunk, file);
  if (BagError.isInstance(unchecked)) return damaged;
  const lostMessages = new Map<number, number>();
  for (const r of unchecked.inner) {
    if (r.opcode !== Opcode.Message) continue;
    const channelId = unchecked.records.view.getUint16(r.at + 9, true);
    lostMessages.set(channelId, (lostMessages.get(channelId) ?? 0) + 1);
  }
  return { ...damaged, lostMessages };
}

/** Whether the file ends with a sound Footer and the closing magic, as only a writer that finished it leaves it. */
function endsWithFooter(readable: Readable, headerEnd: number, file: string | undefined): boolean {
  try {
    readFooter(readable, headerEnd, file);
    return true;
  } catch {
    return false;
  }
}

/** The record cut short at `at` (the data ends at `stop` before it does), salvaged when it is a chunk. */
function salvageCut(readable: Readable, at: number, stop: number, codecs: Codecs): SalvagedChunk | undefined {
  const n = Math.min(stop - at, MAX_SALVAGE_READ);
  if (n < RECORD_PREFIX) return undefined;
  const first = readable.read(at, 1)[0];
  if (first !== Opcode.Chunk) return undefined;
  return salvageChunk(readable.read(at, n, new Uint8Array(n)), codecs);
}

const EMPTY_READABLE: Readable = { size: () => 0, read: () => new Uint8Array(0), close() {} };

/** Decodes a chunk and walks its records; a `BagError` says why it is unusable. */
function decodeChunk(
  loader: ChunkLoader,
  { buf, view, i, length, offset }: WholeRecord,
  file: string | undefined,
): { chunk: Chunk; records: ChunkRecords; inner: InnerRecord[] } | BagError {
  try {
    const records = loader.decode(buf, view, i, length, offset);
    const inner: InnerRecord[] = [];
    const { bytes, view: v, end } = records;
    for (let p = records.start; p < end; ) {
      const length = chunkRecordLength(bytes, v, p, end, file, offset);
      const op = bytes[p]!;
      if (op === Opcode.Schema || op === Opcode.Channel) parseRecord(bytes, v, p, p + length);
      else if (op !== Opcode.Message && op < 0x80) {
        // Chunks hold schemas, channels and messages; anything else is damage (private opcodes ≥ 0x80 are allowed).
        // Stricter than reading, which skips them: `check` reports what a reader passes over.
        throw corrupt(`opcode ${op} inside a chunk`, file, offset);
      }
      inner.push({ opcode: op, at: p, length });
      p += length;
    }
    return { chunk: records.chunk, records, inner };
  } catch (error) {
    return asBagError(error, file, offset, 'bad chunk');
  }
}

/** Parses a non-chunk record (messages are only length-checked): the record, undefined for a message, or the error. */
function checkRecord(
  { buf, view, i, length, offset }: WholeRecord,
  file: string | undefined,
): McapRecord | undefined | BagError {
  if (buf[i] === Opcode.Message) {
    return length < RECORD_PREFIX + MESSAGE_FIXED ? corrupt('message record is too short', file, offset) : undefined;
  }
  try {
    return parseRecord(buf, view, i, i + length).record;
  } catch (error) {
    return asBagError(error, file, offset - i, 'bad record');
  }
}

const CANDIDATES = new Set<number>([Opcode.Chunk, Opcode.Metadata, Opcode.DataEnd]);
const CHUNK_ONLY = new Set<number>([Opcode.Chunk]);

/** The summary section's own records: no writer puts one in the data section, so one found there is damage. */
const SUMMARY_ONLY = new Set<number>([
  Opcode.ChunkIndex,
  Opcode.AttachmentIndex,
  Opcode.Statistics,
  Opcode.MetadataIndex,
  Opcode.SummaryOffset,
]);

/**
 * Whether a record's stated length may be wrong (see walkDataSection): it does not parse, its opcode is none the
 * format defines or one of the summary section's (a damaged opcode byte, whose length is then as suspect: found by
 * fuzzing, a message index turned into a SummaryOffset swallowed the chunk after it), or it is a message index with
 * bytes beyond its entries (what the writer never leaves).
 */
function suspectLength(opcode: number, checked: McapRecord | undefined | BagError, length: number): boolean {
  if (BagError.isInstance(checked) || !KNOWN_OPCODES.has(opcode) || SUMMARY_ONLY.has(opcode)) return true;
  return checked?.type === 'MessageIndex' && length > RECORD_PREFIX + 6 + 16 * checked.records.length;
}
const SEARCH_BLOCK = 1024 * 1024;

/**
 * The offset of the next record in [from, end) that validates completely on its own: a chunk that decodes with all
 * its records, a metadata record whose fields fill it exactly, or a DataEnd; −1 when there is none. Loose messages,
 * schemas and channels are too weakly structured to be told from payload bytes, so they are not searched for.
 */
function findNextRecord(
  readable: Readable,
  loader: ChunkLoader,
  from: number,
  end: number,
  file: string | undefined,
  /**
   * `startsBefore`: where a record may start at the latest (it may run on to `end`); `chunksOnly`: only a chunk that
   * decodes (whose CRC, where it has one, matches) counts, not the weaker metadata and DataEnd shapes.
   */
  within: { startsBefore?: number; chunksOnly?: boolean } = {},
): number {
  const limit = Math.min(end, within.startsBefore ?? end);
  const candidates = within.chunksOnly ? CHUNK_ONLY : CANDIDATES;
  const block = new Uint8Array(Math.min(SEARCH_BLOCK, Math.max(0, limit - from)));
  const prefix = new Uint8Array(RECORD_PREFIX);
  const pv = new DataView(prefix.buffer);
  for (let pos = from; pos < limit && pos + RECORD_PREFIX <= end; pos += block.length) {
    const n = Math.min(block.length, limit - pos);
    const bytes = readable.read(pos, n, block);
    for (let k = 0; k < n; k++) {
      const op = bytes[k]!;
      if (!candidates.has(op)) continue;
      const p = pos + k;
      if (end - p < RECORD_PREFIX) return -1;
      readable.read(p, RECORD_PREFIX, prefix);
      const hi = pv.getUint32(5, true);
      if (hi > 0x1fffff) continue;
      const total = RECORD_PREFIX + hi * TWO_32 + pv.getUint32(1, true);
      if (total > end - p) continue;
      if (op === Opcode.DataEnd) {
        if (total === DATA_END_RECORD) return p;
        continue;
      }
      if (op === Opcode.Chunk ? total < RECORD_PREFIX + CHUNK_FIXED : total < RECORD_PREFIX + 8) continue;
      const record = readable.read(p, total, new Uint8Array(total));
      const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
      if (op === Opcode.Chunk) {
        const chunk = { buf: record, view, i: 0, length: total, offset: p };
        if (!BagError.isInstance(decodeChunk(loader, chunk, file))) return p;
      } else if (isExactMetadata(record, view, total)) return p;
    }
  }
  return -1;
}

/** A metadata record whose name and map lengths add up to exactly its record length. */
function isExactMetadata(record: Uint8Array, view: DataView, total: number): boolean {
  try {
    parseRecord(record, view, 0, total);
  } catch {
    return false;
  }
  const nameLength = view.getUint32(RECORD_PREFIX, true);
  const mapAt = RECORD_PREFIX + 4 + nameLength;
  return mapAt + 4 <= total && mapAt + 4 + view.getUint32(mapAt, true) === total;
}
