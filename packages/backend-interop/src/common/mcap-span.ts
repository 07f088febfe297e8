import type { McapFileReader } from '@vlink/bag-mcap';

/**
 * The first and last message log time of an MCAP file: its statistics, widened by its chunk indexes. Older MCAP C++
 * writers (rosbag2's mcap storage of Humble and before) took a message start time of 0 for "not set yet", so a file
 * whose first message is logged at 0 states a later start in its statistics, while its chunk index has the 0.
 */
export function mcapMessageSpan(mcap: McapFileReader): { firstNs: bigint; lastNs: bigint } | undefined {
  const stats = mcap.statistics;
  if (stats.messageCount === 0n) return undefined;
  let firstNs = stats.messageStartTime;
  let lastNs = stats.messageEndTime;
  for (const chunk of mcap.chunkIndexes) {
    if (chunk.messageIndexOffsets.size === 0) continue; // a chunk without messages states no times
    if (chunk.messageStartTime < firstNs) firstNs = chunk.messageStartTime;
    if (chunk.messageEndTime > lastNs) lastNs = chunk.messageEndTime;
  }
  return { firstNs, lastNs };
}
