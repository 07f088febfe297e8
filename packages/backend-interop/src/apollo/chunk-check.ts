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

/** Why the scan of a record without its index left a chunk body out. */
export type SkipKind = 'mismatch' | 'repeat' | 'headless';

/** A chunk body the scan left out: where, why (its kind, and in its own words), and how many messages it held. */
export interface SkippedBody {
  at: number;
  kind: SkipKind;
  detail: string;
  messages: number;
}

const MANY: Record<SkipKind, string> = {
  mismatch: 'are not the ones their chunk headers describe',
  repeat: 'repeat earlier chunk bodies byte for byte',
  headless: 'have no chunk header before them',
};

/**
 * One line per kind of skipped body: a body alone in its own words, several as a count with the first and last
 * offsets and the first one's words. A damaged record can hold thousands (found by hand: 20,000 copies of one chunk
 * made 1.9 MB of problems, a line each), which would bury everything else `info` says.
 */
export function skippedLines(bodies: readonly SkippedBody[]): string[] {
  const out: string[] = [];
  for (const kind of Object.keys(MANY) as SkipKind[]) {
    const of = bodies.filter((b) => b.kind === kind);
    const [first, last] = [of[0], of.at(-1)];
    if (!first || !last) continue;
    const messages = of.reduce((n, b) => n + b.messages, 0);
    out.push(
      of.length === 1
        ? `chunk body at offset ${first.at} ${first.detail}: its ${messages} messages skipped`
        : `${of.length} chunk bodies ${MANY[kind]} (offsets ${first.at} … ${last.at}; the first ${first.detail}): their ${messages} messages skipped`,
    );
  }
  return out;
}
