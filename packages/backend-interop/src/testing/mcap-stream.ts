import { readFileSync } from 'node:fs';
import { McapStreamReader } from '@mcap/core';
import { loadMcapCodecs } from '../common/lz4.js';
import { sha256 } from './read-all.js';

export interface StreamMessage {
  topic: string;
  logTime: bigint;
  publishTime: bigint;
  sequence: number;
  sha256: string;
}

/**
 * An MCAP file's messages in file order by `@mcap/core`'s streamed reader (CRCs validated): the independent
 * TypeScript reference for the order and the publish times of MCAP-based storage.
 */
export async function streamMessages(path: string): Promise<StreamMessage[]> {
  const codecs = await loadMcapCodecs();
  const reader = new McapStreamReader({
    validateCrcs: true,
    decompressHandlers: {
      zstd: (data, size) => codecs['zstd']!.decompress(data, Number(size)),
      lz4: (data, size) => codecs['lz4']!.decompress(data, Number(size)),
    },
  });
  reader.append(readFileSync(path));
  const topics = new Map<number, string>();
  const out: StreamMessage[] = [];
  for (let record = reader.nextRecord(); record; record = reader.nextRecord()) {
    if (record.type === 'Channel') topics.set(record.id, record.topic);
    if (record.type === 'Message')
      out.push({
        topic: topics.get(record.channelId) ?? '',
        logTime: record.logTime,
        publishTime: record.publishTime,
        sequence: record.sequence,
        sha256: sha256(record.data),
      });
  }
  if (!reader.done()) throw new Error(`${path}: the stream reader did not reach the end`);
  return out;
}
