import { BagError } from '@vlink/bag-core';
import type { McapFileReader, McapReaderOptions } from './mcap-reader.js';

// What a `tryToFix` read of an MCAP file (a foreign `.mcap`, rosbag2's mcap storage, or a `.vcap`) does about damage,
// and how it tells the user what it read around: the same for every format built on MCAP.

/**
 * What a recovery scan of an MCAP file (no usable summary) read around, in words; empty when the file read as it was
 * written. A finished file whose footer or summary cannot be read is damage too (`McapFileReader.summaryDamage`): the
 * scan then reads on through the summary's records, and a chunk copied over another whole left no other trace (found
 * by hand copying records of a ROS 2 `.mcap` over others: 77 of 91 messages read, no error). A file without a summary
 * (the format allows it) or without its footer (a recorder that crashed) is read by the scan alone, and only damage
 * inside it counts.
 */
export function recoveryProblems(mcap: McapFileReader): string[] {
  if (mcap.mode !== 'recovered') return [];
  const problems: string[] = [];
  if (mcap.summaryDamage) problems.push(`the summary cannot be used: ${mcap.summaryDamage.detail}`);
  if (mcap.stoppedAt !== undefined)
    problems.push(`the data section ends at offset ${mcap.stoppedAt}: ${mcap.stopReason?.detail ?? 'damaged'}`);
  if (mcap.damagedChunks > 0) problems.push(`${mcap.damagedChunks} damaged chunk(s) skipped`);
  if (mcap.copiedChunks > 0)
    problems.push(`${mcap.copiedChunks} chunk(s) repeating an earlier one byte for byte skipped`);
  if (mcap.strayMessages > 0) problems.push(`${mcap.strayMessages} message record(s) outside a chunk skipped`);
  return problems;
}

/**
 * `mcap` itself, or with `tryToFix` a reader that can read all it holds: a file whose summary is usable is read through
 * once, and when a chunk does not read (it does not decompress, or its CRC fails) the data section is scanned instead
 * (`scanDespiteSummary`), which skips such a chunk and counts it (`damagedChunks`) where a read by the summary stops at
 * it (found by hand: one flipped byte in a chunk of a ROS 2 `.mcap`, and `clone --try-to-fix`, which `check` points
 * at, copied nothing). `fellBack` says why it scanned. Costs a read of the file at open, with `tryToFix` only.
 */
export function readableThroughout(
  mcap: McapFileReader,
  reopen: (options: Pick<McapReaderOptions, 'scanDespiteSummary'>) => McapFileReader,
  tryToFix: boolean,
): { mcap: McapFileReader; fellBack: string | undefined } {
  if (!tryToFix || mcap.mode === 'recovered') return { mcap, fellBack: undefined };
  try {
    for (const _ of mcap.messages());
    return { mcap, fellBack: undefined };
  } catch (error) {
    if (!BagError.isInstance(error) || error.code !== 'CORRUPT_FILE') throw error;
    const where = error.offset === undefined ? '' : ` at offset ${error.offset}`;
    const scanned = reopen({ scanDespiteSummary: true });
    const [counted, read] = [mcap.statistics.messageCount, scanned.statistics.messageCount];
    const lost =
      counted > read ? `, and ${counted - read} of the ${counted} messages its statistics count were not read` : '';
    const fellBack = `a chunk the summary points at does not read (${error.detail}${where}): the data section was scanned instead${lost}`;
    return { mcap: scanned, fellBack };
  }
}

/**
 * Why a file that read without damage is still not complete: it ends without MCAP's footer and closing magic, so its
 * writer did not finish it (a recorder that crashed). The scan read it, so a strict open takes it, as the mcap
 * libraries' stream readers do; `hasCompleted` and this note tell `check` and `info` (before, `check` passed such
 * a file as "ok"). Undefined for a finished file.
 */
export function unfinishedNote(mcap: McapFileReader): string | undefined {
  if (mcap.mode !== 'recovered' || mcap.finished) return undefined;
  return 'the file ends without its footer and closing magic, so its writer did not finish it: its messages were found by a scan of the data section';
}
