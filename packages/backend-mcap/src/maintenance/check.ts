import { BagError, FORMAT_VERSION } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import { Opcode } from '../mcap/constants.js';
import { CRC32_INIT, crc32Final, crc32Update } from '../mcap/crc32.js';
import { parseRecord } from '../mcap/record-parser.js';
import type { Channel, ChunkIndex, McapRecord, MessageIndex, Metadata, Schema, Statistics } from '../mcap/records.js';
import { readHeader, readSummary, type Summary } from '../mcap/summary.js';
import { CHANNEL_METADATA_PREFIX, HEADER_METADATA, VLINK_PROFILE } from '../vcap/vcap-format.js';
import { walkDataSection } from './data-walk.js';
import { sameChannel, sameSchema } from './records-equal.js';
import { ChannelTally } from './vlink-channel-meta.js';

/** What `check()` found; `ok` is true when `problems` is empty. */
export interface VcapCheckReport {
  ok: boolean;
  /** One line per problem (the first 100). */
  problems: string[];
  /** Messages and chunks found in the data section. */
  messages: number;
  chunks: number;
}

interface ChunkFacts {
  offset: number;
  length: number;
  compression: string;
  storedSize: bigint;
  uncompressedSize: bigint;
  headerStart: bigint;
  headerEnd: bigint;
  messages: number;
  start: bigint;
  end: bigint;
  /** Per channel: "time:offset" of every message, in record order. */
  entries: Map<number, string[]>;
  /** The message index records right after the chunk: channel → [offset, entries]. */
  indexes: Map<number, { offset: number; entries: string[] }>;
  indexLength: number;
}

const MAX_PROBLEMS = 100;
const URL_KINDS = new Set(['Method', 'Event', 'Field', 'Unknown']);

/**
 * Validates a whole `.vcap` (or MCAP) file beyond what opening it needs: structure of every record, chunk
 * decompression and CRCs, the data-section CRC when the file has one, and that the summary agrees with a scan of the
 * data (statistics, schemas, channels, chunk indexes with their message indexes, metadata indexes, summary offsets).
 * For VLink files also the `VLinkHeader` keys and a `VLinkChannel_<id>` per channel whose counts agree.
 */
export function checkVcapReadable(readable: Readable, codecs: Codecs, file?: string): VcapCheckReport {
  const problems: string[] = [];
  const problem = (text: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(text);
  };
  const report = (messages = 0, chunks = 0): VcapCheckReport => ({ ok: problems.length === 0, problems, messages, chunks });

  let headerEnd: number;
  let vlink: boolean;
  try {
    const h = readHeader(readable, file);
    headerEnd = h.headerEnd;
    vlink = h.header.profile === VLINK_PROFILE;
  } catch (error) {
    problem(`header: ${message(error)}`);
    return report();
  }
  let summary: Summary | undefined;
  try {
    summary = readSummary(readable, headerEnd, file);
    if (summary.footer.summaryStart === 0n) problem('the file has no summary section');
  } catch (error) {
    problem(`footer or summary: ${message(error)}`);
  }

  // --- the data section ------------------------------------------------------------------------------------------
  const schemas = new Map<number, Schema>();
  const channels = new Map<number, Channel>();
  const tallies = new Map<number, ChannelTally>();
  const chunks: ChunkFacts[] = [];
  const metadata: Array<{ offset: number; length: number; record: Metadata }> = [];
  let messageCount = 0;
  let start = 0n;
  let end = 0n;
  let attachments = 0;
  let dataEnd: { offset: number; crc: number } | undefined;
  let lastChunk: ChunkFacts | undefined;
  const count = (channelId: number, time: bigint, payload: number) => {
    if (!channels.has(channelId)) problem(`message on channel ${channelId} before its channel record`);
    if (messageCount === 0 || time < start) start = time;
    if (messageCount === 0 || time > end) end = time;
    messageCount++;
    let tally = tallies.get(channelId);
    if (!tally) tallies.set(channelId, (tally = new ChannelTally()));
    tally.add(time, payload);
  };
  const define = (record: McapRecord, offset: number) => {
    if (record.type === 'Schema') {
      const known = schemas.get(record.id);
      if (known && !same(known, record)) problem(`schema ${record.id} at ${offset} differs from an earlier record with that id`);
      if (!known) schemas.set(record.id, { ...record, data: record.data.slice() });
    } else if (record.type === 'Channel') {
      const known = channels.get(record.id);
      if (known && !same(known, record)) problem(`channel ${record.id} at ${offset} differs from an earlier record with that id`);
      if (record.schemaId !== 0 && !schemas.has(record.schemaId)) problem(`channel ${record.id} at ${offset} refers to unknown schema ${record.schemaId}`);
      if (!known) channels.set(record.id, record);
    }
  };

  const walkEnd = summary ? summary.dataEnd : readable.size();
  try {
    walkDataSection(readable, headerEnd, walkEnd, { codecs, validateCrcs: true, resync: true, ...(file === undefined ? {} : { file }) }, (item) => {
      if (item.kind !== 'record' || item.opcode !== Opcode.MessageIndex) lastChunk = undefined;
      switch (item.kind) {
        case 'damaged':
          problem(`${item.chunk ? 'damaged chunk' : 'unreadable bytes'} at ${item.offset} (${item.length} bytes): ${item.reason.message}`);
          return;
        case 'end':
          if (item.opcode === Opcode.DataEnd) dataEnd = { offset: item.offset, crc: item.view.getUint32(item.at + 9, true) };
          else problem(`footer at ${item.offset} without a DataEnd record before it`);
          return;
        case 'chunk': {
          const { chunk, records, inner } = item;
          const facts: ChunkFacts = {
            offset: item.offset, length: item.length, compression: chunk.compression, storedSize: BigInt(chunk.recordsLength),
            uncompressedSize: chunk.uncompressedSize, headerStart: chunk.messageStartTime, headerEnd: chunk.messageEndTime,
            messages: 0, start: 0n, end: 0n, entries: new Map(), indexes: new Map(), indexLength: 0,
          };
          for (const r of inner) {
            if (r.opcode === Opcode.Message) {
              const cid = records.view.getUint16(r.at + 9, true);
              const time = records.view.getBigUint64(r.at + 15, true);
              count(cid, time, r.length - 31);
              if (facts.messages === 0 || time < facts.start) facts.start = time;
              if (facts.messages === 0 || time > facts.end) facts.end = time;
              facts.messages++;
              let list = facts.entries.get(cid);
              if (!list) facts.entries.set(cid, (list = []));
              list.push(`${time}:${r.at - records.start}`);
            } else if (r.opcode === Opcode.Schema || r.opcode === Opcode.Channel) {
              define(parseRecord(records.bytes, records.view, r.at, r.at + r.length).record, item.offset);
            }
          }
          if (facts.messages > 0 && (facts.headerStart !== facts.start || facts.headerEnd !== facts.end)) {
            problem(`chunk at ${item.offset}: header times ${facts.headerStart}..${facts.headerEnd} disagree with its messages ${facts.start}..${facts.end}`);
          }
          chunks.push(facts);
          lastChunk = facts;
          return;
        }
        case 'record': {
          if (item.opcode === Opcode.Message) {
            count(item.view.getUint16(item.at + 9, true), item.view.getBigUint64(item.at + 15, true), item.length - 31);
            return;
          }
          const record = item.parsed!;
          if (record.type === 'Schema' || record.type === 'Channel') define(record, item.offset);
          else if (record.type === 'Metadata') metadata.push({ offset: item.offset, length: item.length, record });
          else if (record.type === 'Attachment') attachments++;
          else if (record.type === 'MessageIndex') {
            if (!lastChunk) problem(`message index at ${item.offset} does not follow a chunk`);
            else {
              if (lastChunk.indexes.has(record.channelId)) problem(`two message indexes for channel ${record.channelId} after the chunk at ${lastChunk.offset}`);
              lastChunk.indexes.set(record.channelId, { offset: item.offset, entries: indexEntries(record) });
              lastChunk.indexLength += item.length;
            }
          } else if (record.type !== 'Unknown') problem(`${record.type} record at ${item.offset} in the data section`);
          return;
        }
      }
    });
  } catch (error) {
    problem(`data section: ${message(error)}`);
  }

  // Message indexes against the chunks they follow.
  for (const c of chunks) {
    for (const [cid, list] of c.entries) {
      const index = c.indexes.get(cid);
      if (!index) problem(`chunk at ${c.offset}: no message index for channel ${cid}`);
      else if (!sameList(index.entries, list)) problem(`chunk at ${c.offset}: message index of channel ${cid} does not match its messages`);
    }
    for (const cid of c.indexes.keys()) if (!c.entries.has(cid)) problem(`chunk at ${c.offset}: message index for channel ${cid}, which has no messages there`);
  }

  if (!dataEnd) problem('no DataEnd record');
  else {
    if (summary && summary.footer.summaryStart !== 0n && dataEnd.offset + 13 !== summary.dataEnd) problem('DataEnd is not the last record before the summary');
    if (dataEnd.crc !== 0) {
      const crc = crcOf(readable, dataEnd.offset);
      if (crc !== dataEnd.crc) problem(`data section CRC mismatch (stored ${dataEnd.crc}, computed ${crc})`);
    }
  }

  // --- the summary against the data ------------------------------------------------------------------------------
  if (summary && summary.footer.summaryStart !== 0n) {
    const st = summary.statistics;
    if (!st) problem('the summary has no Statistics record');
    else compareStatistics(st, { messageCount, start, end, attachments, chunks: chunks.length, metadata: metadata.length, schemas, channels, tallies }, problem);
    compareDefinitions('schema', summary.schemas, schemas, vlink, problem);
    compareDefinitions('channel', summary.channels, channels, vlink, problem);
    compareChunkIndexes(summary.chunkIndexes, chunks, problem);
    const byOffset = new Map(metadata.map((m) => [m.offset, m]));
    if (summary.metadataIndexes.length !== metadata.length) problem(`${summary.metadataIndexes.length} metadata indexes for ${metadata.length} metadata records`);
    for (const m of summary.metadataIndexes) {
      const found = byOffset.get(Number(m.offset));
      if (!found || BigInt(found.length) !== m.length || found.record.name !== m.name) problem(`metadata index "${m.name}" at ${m.offset} does not match a metadata record`);
    }
    for (const g of summary.summaryOffsets) {
      const inside = g.groupStart >= summary.footer.summaryStart && g.groupStart + g.groupLength <= summary.footer.summaryOffsetStart;
      let opcode = -1;
      if (inside && g.groupLength > 0n) opcode = readable.read(Number(g.groupStart), 1)[0]!;
      if (!inside || opcode !== g.groupOpcode) problem(`summary offset for opcode ${g.groupOpcode} does not point at such a group`);
    }
  }

  if (vlink) checkVlinkMetadata(metadata, channels, tallies, problem);
  return report(messageCount, chunks.length);
}

function compareStatistics(
  st: Statistics,
  found: {
    messageCount: number; start: bigint; end: bigint; attachments: number; chunks: number; metadata: number;
    schemas: Map<number, Schema>; channels: Map<number, Channel>; tallies: Map<number, ChannelTally>;
  },
  problem: (text: string) => void,
): void {
  const pairs: Array<[string, bigint | number, bigint | number]> = [
    ['messageCount', st.messageCount, BigInt(found.messageCount)],
    ['schemaCount', st.schemaCount, found.schemas.size],
    ['channelCount', st.channelCount, found.channels.size],
    ['attachmentCount', st.attachmentCount, found.attachments],
    ['metadataCount', st.metadataCount, found.metadata],
    ['chunkCount', st.chunkCount, found.chunks],
    ['messageStartTime', st.messageStartTime, found.start],
    ['messageEndTime', st.messageEndTime, found.end],
  ];
  for (const [name, stored, counted] of pairs) if (stored !== counted) problem(`statistics ${name} is ${stored}, the data has ${counted}`);
  const ids = new Set([...st.channelMessageCounts.keys(), ...found.tallies.keys()]);
  for (const id of ids) {
    const stored = st.channelMessageCounts.get(id) ?? 0n;
    const counted = BigInt(found.tallies.get(id)?.count ?? 0);
    if (stored !== counted) problem(`statistics count of channel ${id} is ${stored}, the data has ${counted}`);
  }
}

/** Summary schemas/channels must equal the data's; VLink files must repeat all of them (writers do). */
function compareDefinitions<T extends Schema | Channel>(what: string, inSummary: Map<number, T>, inData: Map<number, T>, complete: boolean, problem: (text: string) => void): void {
  for (const [id, record] of inSummary) {
    const data = inData.get(id);
    if (!data) problem(`summary ${what} ${id} is not in the data section`);
    else if (!same(data, record)) problem(`summary ${what} ${id} differs from the data section's`);
  }
  if (complete) for (const id of inData.keys()) if (!inSummary.has(id)) problem(`${what} ${id} is missing from the summary`);
}

function compareChunkIndexes(indexes: readonly ChunkIndex[], chunks: ChunkFacts[], problem: (text: string) => void): void {
  const byOffset = new Map(chunks.map((c) => [c.offset, c]));
  if (indexes.length !== chunks.length) problem(`${indexes.length} chunk indexes for ${chunks.length} chunks`);
  for (const ci of indexes) {
    const c = byOffset.get(Number(ci.chunkStartOffset));
    const at = `chunk index for ${ci.chunkStartOffset}`;
    if (!c) {
      problem(`${at}: no chunk there`);
      continue;
    }
    if (ci.chunkLength !== BigInt(c.length)) problem(`${at}: length ${ci.chunkLength}, the chunk has ${c.length}`);
    if (ci.compression !== c.compression || ci.compressedSize !== c.storedSize || ci.uncompressedSize !== c.uncompressedSize) problem(`${at}: compression or sizes disagree with the chunk`);
    if (ci.messageStartTime !== c.start || ci.messageEndTime !== c.end) problem(`${at}: times ${ci.messageStartTime}..${ci.messageEndTime}, the messages say ${c.start}..${c.end}`);
    if (ci.messageIndexLength !== BigInt(c.indexLength)) problem(`${at}: message index length ${ci.messageIndexLength}, found ${c.indexLength}`);
    const ids = new Set([...ci.messageIndexOffsets.keys(), ...c.indexes.keys()]);
    for (const id of ids) {
      const offset = ci.messageIndexOffsets.get(id);
      if (offset === undefined || offset !== BigInt(c.indexes.get(id)?.offset ?? -1)) problem(`${at}: message index offset of channel ${id} is wrong`);
    }
  }
}

function checkVlinkMetadata(
  metadata: Array<{ record: Metadata; offset: number }>,
  channels: Map<number, Channel>,
  tallies: Map<number, ChannelTally>,
  problem: (text: string) => void,
): void {
  const headers = metadata.filter((m) => m.record.name === HEADER_METADATA);
  if (headers.length !== 1) problem(`${headers.length} VLinkHeader metadata records (expected 1)`);
  const header = headers[0]?.record.metadata;
  if (header) {
    for (const key of ['version', 'compress', 'process', 'date', 'timezone']) if (!header.get(key)) problem(`VLinkHeader has no ${key}`);
    if (!/^\s*-?\d+\s*$/.test(header.get('start_timestamp') ?? '')) problem('VLinkHeader start_timestamp is not an integer');
    const major = Number.parseInt(header.get('version') ?? '', 10);
    if (header.get('version') && major !== FORMAT_VERSION.major) problem(`VLinkHeader version ${header.get('version')} is not ${FORMAT_VERSION.major}.x`);
  }
  const seen = new Set<number>();
  for (const { record, offset } of metadata) {
    if (!record.name.startsWith(CHANNEL_METADATA_PREFIX)) continue;
    const idText = record.name.slice(CHANNEL_METADATA_PREFIX.length);
    const id = /^\d+$/.test(idText) ? Number(idText) : NaN;
    const channel = channels.get(id);
    const m = record.metadata;
    if (!channel) {
      problem(`${record.name} at ${offset} names no channel`);
      continue;
    }
    if (seen.has(id)) problem(`two ${record.name} records`);
    seen.add(id);
    const tally = tallies.get(id);
    if (m.get('index') !== String(id - 1)) problem(`${record.name}: index ${m.get('index')} is not ${id - 1}`);
    if (m.get('count') !== String(tally?.count ?? 0)) problem(`${record.name}: count ${m.get('count')}, the data has ${tally?.count ?? 0}`);
    if (m.get('size') !== String(tally?.size ?? 0)) problem(`${record.name}: size ${m.get('size')}, the data has ${tally?.size ?? 0}`);
    if (!URL_KINDS.has(m.get('type') ?? '')) problem(`${record.name}: type "${m.get('type')}" is not Method, Event, Field or Unknown`);
    const loss = Number(m.get('loss'));
    if (!m.has('loss') || !Number.isFinite(loss) || (loss !== -1 && (loss < 0 || loss > 1))) problem(`${record.name}: loss "${m.get('loss')}" is not −1 or in [0, 1]`);
    const freq = Number(m.get('freq'));
    if (!m.has('freq') || !(freq >= 0) || !Number.isFinite(freq)) problem(`${record.name}: freq "${m.get('freq')}" is not a finite number ≥ 0`);
  }
  for (const [id, tally] of tallies) if (tally.count > 0 && !seen.has(id)) problem(`no ${CHANNEL_METADATA_PREFIX}${id} for channel ${id} (${tally.count} messages)`);
}

function indexEntries(record: MessageIndex): string[] {
  return record.records.map(([time, offset]) => `${time}:${offset}`);
}

function sameList(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((v, i) => v === y[i]);
}

/** CRC-32 of the file bytes [0, end). */
function crcOf(readable: Readable, end: number): number {
  const block = new Uint8Array(Math.min(4 * 1024 * 1024, Math.max(1, end)));
  let crc = CRC32_INIT;
  for (let pos = 0; pos < end; pos += block.length) crc = crc32Update(crc, readable.read(pos, Math.min(block.length, end - pos), block));
  return crc32Final(crc);
}

function same(a: Schema | Channel, b: Schema | Channel): boolean {
  if (a.type === 'Schema') return b.type === 'Schema' && sameSchema(a, b);
  return b.type === 'Channel' && sameChannel(a, b);
}

function message(error: unknown): string {
  return BagError.isInstance(error) || error instanceof Error ? error.message : String(error);
}
