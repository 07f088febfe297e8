import type { McapFileReader, Readable } from '@vlink/bag-mcap';

/**
 * What a recovery scan of an MCAP file (no usable summary) read around, in words; empty when the file read as it was
 * written. A summary that is there (the file ends with its magic) but cannot be used is damage too: the scan then
 * reads on through the summary's records, and a chunk copied over another whole left no other trace (found by hand
 * copying records of a ROS 2 `.mcap` over others: 77 of 91 messages read, no error). A file that does not end with
 * its magic was not finished (a recorder that crashed): the scan reads it whole, and only damage inside it counts.
 */
export function recoveryProblems(mcap: McapFileReader, readable: Readable): string[] {
  if (mcap.mode !== 'recovered') return [];
  const problems: string[] = [];
  if (endsWithMagic(readable) && mcap.summaryError)
    problems.push(`the summary cannot be used: ${mcap.summaryError.detail}`);
  if (mcap.stoppedAt !== undefined)
    problems.push(`the data section ends at offset ${mcap.stoppedAt}: ${mcap.stopReason?.detail ?? 'damaged'}`);
  if (mcap.damagedChunks > 0) problems.push(`${mcap.damagedChunks} damaged chunk(s) skipped`);
  if (mcap.copiedChunks > 0)
    problems.push(`${mcap.copiedChunks} chunk(s) repeating an earlier one byte for byte skipped`);
  if (mcap.strayMessages > 0) problems.push(`${mcap.strayMessages} message record(s) outside a chunk skipped`);
  return problems;
}

/** Whether the file ends with MCAP's closing magic (a writer finished it). */
export function endsWithMagic(readable: Readable): boolean {
  const size = readable.size();
  if (size < 16) return false;
  const tail = readable.read(size - 8, 8);
  return MAGIC.every((b, i) => tail[i] === b);
}

const MAGIC = [0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a];
