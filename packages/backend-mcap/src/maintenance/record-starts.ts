import { RECORD_PREFIX, TWO_32, Opcode } from '../mcap/constants.js';
import type { Readable } from '../io/readable.js';

// Where a record starts in a damaged data section, by its prefix alone: what the repair's walk (data-walk.ts) may go
// on at after bytes it cannot use.

/** The opcodes MCAP defines. */
export const KNOWN_OPCODES = new Set<number>(Object.values(Opcode));

/** Whether a record of a known opcode, whose length fits the data section, starts at `pos` (or the data ends there). */
export function startsRecord(readable: Readable, pos: number, end: number): boolean {
  if (pos === end) return true;
  if (end - pos < RECORD_PREFIX) return false;
  const prefix = readable.read(pos, RECORD_PREFIX, new Uint8Array(RECORD_PREFIX));
  const view = new DataView(prefix.buffer, prefix.byteOffset, RECORD_PREFIX);
  const hi = view.getUint32(5, true);
  const op = prefix[0]!;
  return (
    op !== 0 &&
    KNOWN_OPCODES.has(op) &&
    hi <= 0x1fffff &&
    RECORD_PREFIX + hi * TWO_32 + view.getUint32(1, true) <= end - pos
  );
}

/** The most records of opcode 0 in a row stepped over (a zeroed MiB of empty records) before searching instead. */
const MAX_ZEROED_RECORDS = 120_000;

/**
 * Where a run of opcode-0 records from `pos` on ends at the start of a known record (or the end of the section): a
 * reader steps over each by its length. −1 when the run leads elsewhere (or is too long to follow).
 */
export function pastZeroedRecords(readable: Readable, pos: number, end: number): number {
  const prefix = new Uint8Array(RECORD_PREFIX);
  const view = new DataView(prefix.buffer);
  for (let n = 0; n <= MAX_ZEROED_RECORDS && pos <= end; n++) {
    if (startsRecord(readable, pos, end)) return pos;
    if (end - pos < RECORD_PREFIX) return -1;
    readable.read(pos, RECORD_PREFIX, prefix);
    if (prefix[0] !== 0) return -1;
    const hi = view.getUint32(5, true);
    if (hi > 0x1fffff) return -1;
    pos += RECORD_PREFIX + hi * TWO_32 + view.getUint32(1, true);
  }
  return -1;
}
