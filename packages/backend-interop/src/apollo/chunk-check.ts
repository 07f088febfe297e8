import type { ChunkHeaderCache } from './record-proto.js';

/** One message of a chunk body, as decoded. */
export interface BodyMessage {
  channel: string;
  time: bigint;
  content: Uint8Array;
}

/**
 * Why a chunk body is not the one its chunk header describes, or undefined when it is. Records carry no checksum:
 * without this a body copied over another is read in its place (found by hand, copying whole sections of a record of
 * 64 messages over others: 25 of them read twice, or 11 lost, and no error). Every writer of the format counts each
 * message into `message_number` and takes `begin_time` and `end_time` from message times (Cyber RT's C++ writer, in
 * each of its versions, the least and greatest or the first and last; cyber_record's Python writer the first and
 * last), so a body with another count, or without a message at either time, belongs to another chunk.
 */
export function bodyMismatch(header: ChunkHeaderCache, messages: readonly BodyMessage[]): string | undefined {
  if (messages.length !== header.messageNumber)
    return `it holds ${messages.length} messages, its header ${header.messageNumber}`;
  if (messages.length === 0) return undefined;
  const has = (time: bigint) => messages.some((m) => m.time === time);
  if (!has(header.beginTime)) return `no message of it has its header's begin time, ${header.beginTime} ns`;
  if (!has(header.endTime)) return `no message of it has its header's end time, ${header.endTime} ns`;
  return undefined;
}
