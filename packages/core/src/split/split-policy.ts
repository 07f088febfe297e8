import type { ResolvedWriterConfig } from '../model/config.js';

/** The split settings of a recording (format reference §1.2, §4.3). Sizes bytes, times ms. */
export interface SplitRule {
  splitBySize: number;
  splitByTime: number;
  beginTime: number;
}

export function splitRuleOf(
  config: Pick<ResolvedWriterConfig, 'splitBySize' | 'splitByTime' | 'beginTime'>,
): SplitRule {
  return { splitBySize: config.splitBySize, splitByTime: config.splitByTime, beginTime: config.beginTime };
}

/** The manifest's `split_by_size`: 0 when time-based splitting is on (it takes priority), else the configured size. */
export function manifestSplitBySize(rule: SplitRule): number {
  return rule.splitByTime > 0 ? 0 : rule.splitBySize;
}

/**
 * Whether the message about to be written opens a new segment (format reference §4.3). Time takes priority: split when
 * `ts − beginTime·1000 > splitByTime·1000·(index+1)` (fixed boundaries; one split per message however many intervals
 * were skipped); else when the segment's accounted (uncompressed) bytes plus this payload exceed `splitBySize`.
 * The caller checks this only once the current segment holds at least one url; the message goes to the new segment.
 *
 * @param index the current segment's split index (0 for the first segment)
 * @param segmentBytes accounted bytes already in the current segment
 * @param timestampUs the message's timestamp, µs since recording start
 * @param size the message's payload size
 */
export function shouldSplit(
  rule: SplitRule,
  index: number,
  segmentBytes: number,
  timestampUs: number,
  size: number,
): boolean {
  if (rule.splitByTime > 0) return timestampUs - rule.beginTime * 1000 > rule.splitByTime * 1000 * (index + 1);
  if (rule.splitBySize > 0) return segmentBytes + size > rule.splitBySize;
  return false;
}
