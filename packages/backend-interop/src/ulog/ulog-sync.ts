import type { Readable } from '@vlink/bag-mcap';

/** The payload of a sync (`S`) message: PX4's logger writes one now and then so that a reader can find its way back. */
const SYNC_MAGIC = new Uint8Array([0x2f, 0x73, 0x13, 0x20, 0x25, 0x0c, 0xbb, 0x12]);
/** Every message type the ULog format defines (definitions and data sections), as a table by type byte. */
const KNOWN_TYPES = new Uint8Array(256);
for (const c of 'BFIMPQARDLCSO') KNOWN_TYPES[c.charCodeAt(0)] = 1;
/** pyulog's bound for a message of an unknown type: longer, it is damage rather than a newer logger's message. */
const MAX_UNKNOWN_LENGTH = 10_000;
const SEARCH_CHUNK = 64 * 1024;

/**
 * A message header that cannot be one (pyulog's rule, so that both skip the same bytes): a type the format does not
 * define with type 0, an empty body or a body over 10,000 bytes. An unknown type otherwise is a newer logger's
 * message, skipped as the format says.
 */
export function isDamagedHeader(type: number, length: number): boolean {
  return KNOWN_TYPES[type] === 0 && (type === 0 || length === 0 || length > MAX_UNKNOWN_LENGTH);
}

export function isKnownType(type: number): boolean {
  return KNOWN_TYPES[type] === 1;
}

/** Where the first sync magic in [from, until) ends (the next message starts there), or undefined. */
export function findSyncEnd(readable: Readable, from: number, until = readable.size()): number | undefined {
  const end = Math.min(until, readable.size());
  for (let at = from; at + SYNC_MAGIC.length <= end; at += SEARCH_CHUNK - (SYNC_MAGIC.length - 1)) {
    const chunk = readable.read(at, Math.min(SEARCH_CHUNK, end - at));
    for (let i = chunk.indexOf(SYNC_MAGIC[0]!); i >= 0 && i + SYNC_MAGIC.length <= chunk.length; ) {
      if (SYNC_MAGIC.every((b, k) => chunk[i + k] === b)) return at + i + SYNC_MAGIC.length;
      i = chunk.indexOf(SYNC_MAGIC[0]!, i + 1);
    }
    if (at + chunk.length >= end) break;
  }
  return undefined;
}
