import type { ProgressCallback } from '@vlink/bag-core';
import type { Codecs } from '../codecs.js';
import type { Readable } from '../io/readable.js';
import { Opcode } from '../mcap/constants.js';
import { crc32, crc32Append } from '../mcap/crc32.js';
import { DuplicateChunks } from '../mcap/duplicate-chunks.js';
import { parseRecord } from '../mcap/record-parser.js';
import type { Channel, McapRecord, MessageIndex, Metadata, Schema } from '../mcap/records.js';
import { errorMessage, type ReportProblem } from './check-problems.js';
import { walkDataSection } from './data-walk.js';
import { sameDefinition } from './records-equal.js';
import { ChannelTally } from './vlink-channel-meta.js';

/** What the scan saw of one chunk and the message indexes right after it. */
export interface ChunkFacts {
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

/** Everything found in the data section, for comparing the summary (and the VLink metadata) against. */
export interface DataSectionFacts {
  schemas: Map<number, Schema>;
  channels: Map<number, Channel>;
  tallies: Map<number, ChannelTally>;
  chunks: ChunkFacts[];
  metadata: Array<{ offset: number; length: number; record: Metadata }>;
  messageCount: number;
  start: bigint;
  end: bigint;
  attachments: number;
  dataEnd: { offset: number; crc: number } | undefined;
  /** CRC-32 of the bytes before DataEnd, computed on the way (undefined when damage interrupted the walk). */
  dataCrc: number | undefined;
}

/**
 * Walks the data section [headerEnd, walkEnd) and collects its facts, reporting what is wrong in the data itself
 * (damaged chunks, stray bytes, conflicting definitions, messages before their channel, chunk header times, records
 * that do not belong there). A walk that throws is reported too; the facts then cover what came before.
 */
export function scanDataSection(
  readable: Readable,
  headerEnd: number,
  walkEnd: number,
  codecs: Codecs,
  file: string | undefined,
  problem: ReportProblem,
  onProgress?: ProgressCallback,
): DataSectionFacts {
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
  // The data-section CRC, from the bytes the walk reads anyway (the file is not read a second time for it).
  let dataCrc: number | undefined = crc32(readable.read(0, headerEnd, new Uint8Array(headerEnd)));
  let crcDone = false;
  const seenChunks = new DuplicateChunks();
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
      if (known && !sameDefinition(known, record))
        problem(`schema ${record.id} at ${offset} differs from an earlier record with that id`);
      if (!known) schemas.set(record.id, { ...record, data: record.data.slice() });
    } else if (record.type === 'Channel') {
      const known = channels.get(record.id);
      if (known && !sameDefinition(known, record))
        problem(`channel ${record.id} at ${offset} differs from an earlier record with that id`);
      if (record.schemaId !== 0 && !schemas.has(record.schemaId))
        problem(`channel ${record.id} at ${offset} refers to unknown schema ${record.schemaId}`);
      if (!known) channels.set(record.id, record);
    }
  };

  try {
    walkDataSection(
      readable,
      headerEnd,
      walkEnd,
      { codecs, validateCrcs: true, resync: true, ...(file === undefined ? {} : { file }) },
      (item) => {
        // Bytes of the data section walked, reported once per chunk (the unit of work worth a redraw).
        if (onProgress && item.kind === 'chunk')
          onProgress({ done: Math.min(item.offset + item.length, walkEnd), total: walkEnd, unit: 'bytes' });
        if (item.kind !== 'record' || item.opcode !== Opcode.MessageIndex) lastChunk = undefined;
        if (item.kind === 'record' || item.kind === 'chunk') {
          if (dataCrc !== undefined && !crcDone)
            dataCrc = crc32Append(dataCrc, item.buf.subarray(item.at, item.at + item.length));
        } else if (item.kind === 'end') crcDone = true;
        else dataCrc = undefined;
        switch (item.kind) {
          case 'damaged':
            problem(
              `${item.chunk ? 'damaged chunk' : 'unreadable bytes'} (${item.length} bytes): ${item.reason.message}`,
              item.offset,
            );
            return;
          case 'salvaged':
            problem(`chunk cut short or undecodable (${item.length} bytes): ${item.reason.message}`, item.offset);
            return;
          case 'end':
            if (item.opcode === Opcode.DataEnd)
              dataEnd = { offset: item.offset, crc: item.view.getUint32(item.at + 9, true) };
            else problem('footer without a DataEnd record before it', item.offset);
            return;
          case 'chunk': {
            const first = seenChunks.copyOf(readable, item);
            if (first !== undefined) {
              problem(`chunk (${item.length} bytes) repeats the chunk at ${first} byte for byte: damage`, item.offset);
              return;
            }
            const { chunk, records, inner } = item;
            const facts: ChunkFacts = {
              offset: item.offset,
              length: item.length,
              compression: chunk.compression,
              storedSize: BigInt(chunk.recordsLength),
              uncompressedSize: chunk.uncompressedSize,
              headerStart: chunk.messageStartTime,
              headerEnd: chunk.messageEndTime,
              messages: 0,
              start: 0n,
              end: 0n,
              entries: new Map(),
              indexes: new Map(),
              indexLength: 0,
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
              problem(
                `chunk header times ${facts.headerStart}..${facts.headerEnd} disagree with its messages ${facts.start}..${facts.end}`,
                item.offset,
              );
            }
            chunks.push(facts);
            lastChunk = facts;
            return;
          }
          case 'record': {
            if (item.opcode === Opcode.Message) {
              count(
                item.view.getUint16(item.at + 9, true),
                item.view.getBigUint64(item.at + 15, true),
                item.length - 31,
              );
              return;
            }
            const record = item.parsed!;
            if (record.type === 'Schema' || record.type === 'Channel') define(record, item.offset);
            else if (record.type === 'Metadata') metadata.push({ offset: item.offset, length: item.length, record });
            else if (record.type === 'Attachment') attachments++;
            else if (record.type === 'MessageIndex') {
              if (!lastChunk) problem('message index does not follow a chunk', item.offset);
              else {
                if (lastChunk.indexes.has(record.channelId))
                  problem(`two message indexes for channel ${record.channelId} after the chunk at ${lastChunk.offset}`);
                lastChunk.indexes.set(record.channelId, { offset: item.offset, entries: indexEntries(record) });
                lastChunk.indexLength += item.length;
              }
            } else if (record.type !== 'Unknown') problem(`${record.type} record in the data section`, item.offset);
            return;
          }
        }
      },
    );
  } catch (error) {
    problem(`data section: ${errorMessage(error)}`);
  }
  onProgress?.({ done: walkEnd, total: walkEnd, unit: 'bytes' });
  return {
    schemas,
    channels,
    tallies,
    chunks,
    metadata,
    messageCount,
    start,
    end,
    attachments,
    dataEnd,
    dataCrc: crcDone ? dataCrc : undefined,
  };
}

/** Message indexes against the chunks they follow. */
export function checkMessageIndexes(chunks: readonly ChunkFacts[], problem: ReportProblem): void {
  for (const c of chunks) {
    for (const [cid, list] of c.entries) {
      const index = c.indexes.get(cid);
      if (!index) problem(`chunk at ${c.offset}: no message index for channel ${cid}`);
      else if (!sameList(index.entries, list))
        problem(`chunk at ${c.offset}: message index of channel ${cid} does not match its messages`);
    }
    for (const cid of c.indexes.keys())
      if (!c.entries.has(cid))
        problem(`chunk at ${c.offset}: message index for channel ${cid}, which has no messages there`);
  }
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
