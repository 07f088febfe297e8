import type { Info, InfoMetadata } from './info.js';

/**
 * What a bag's reader read around (a `tryToFix` read of a damaged file) or why the bag is not complete, one entry per
 * problem, in a `<format>.problems` metadata record of its info: every foreign reader lists them so (`mcap.problems`,
 * `rosbag.problems`, `rosbag2.problems`, `record.problems`, `ulog.problems`), and so do `.vcap` and `.vdb` (`vcap.problems`, `vdb.problems`).
 * `info` shows them, `check` fails on them, and the copying verbs of the CLI warn of them, so that a recovered bag
 * never looks whole.
 */
const SUFFIX = '.problems';

/** The record listing `problems` under `<format>.problems`, in a list to spread into the metadata (empty: none). */
export function problemsRecord(format: string, problems: readonly string[]): InfoMetadata[] {
  if (problems.length === 0) return [];
  return [{ name: `${format}${SUFFIX}`, values: Object.fromEntries(problems.map((p, i) => [String(i), p])) }];
}

/**
 * Whether a metadata record is a reader's account of the damage it read around: it describes the file read, not what
 * was in it, so a copy does not carry it (a copy of a salvaged bag holds what was read, and is whole).
 */
export function isProblemsRecord(record: InfoMetadata): boolean {
  return record.name.endsWith(SUFFIX);
}

/** The problems every `<format>.problems` record of `info` lists, in order. */
export function infoProblems(info: Pick<Info, 'metadata'>): string[] {
  return (info.metadata ?? []).filter(isProblemsRecord).flatMap((m) => Object.values(m.values).map(String));
}
