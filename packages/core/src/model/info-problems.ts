import type { Info } from './info.js';

/**
 * What a bag's reader read around (a `tryToFix` read of a damaged file) or why the bag is not complete, one entry per
 * problem: every foreign reader lists them in a `<format>.problems` metadata record (`mcap.problems`,
 * `rosbag.problems`, `rosbag2.problems`, `record.problems`, `ulog.problems`). `info` shows them, `check` fails on
 * them, and the copying verbs of the CLI warn of them, so that a recovered bag never looks whole.
 */
export function infoProblems(info: Pick<Info, 'metadata'>): string[] {
  return (info.metadata ?? [])
    .filter((m) => m.name.endsWith('.problems'))
    .flatMap((m) => Object.values(m.values).map(String));
}
