import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fixturePath } from '@vlink/fixtures';

/** A fixture's `<file>.expected.json` (see fixtures/foreign/README.md): what its reference reader read from it. */
export interface ExpectedTopic {
  topic: string;
  type: string;
  encoding: string;
  count: number;
  schema_encoding?: string;
  schema_sha256?: string;
  descriptor_files?: string[];
  channel_metadata?: Record<string, string>;
}

export interface ExpectedMessage {
  topic: string;
  log_time_ns: string;
  publish_time_ns?: string;
  sequence?: number;
  header_stamp_ns?: string;
  header_seq?: number;
  size: number;
  sha256: string;
}

export interface ExpectedDecoded {
  index: number;
  topic: string;
  fields: unknown;
}

export interface Expected {
  format: string;
  reader: string;
  topics: ExpectedTopic[];
  messages: ExpectedMessage[];
  decoded: ExpectedDecoded[];
  metadata?: Array<{ name: string; metadata: Record<string, string> }>;
  attachments?: Array<{
    name: string;
    media_type: string;
    log_time_ns: string;
    create_time_ns: string;
    size: number;
    sha256: string;
  }>;
  [key: string]: unknown;
}

/** The path of a fixture under fixtures/foreign. */
export function foreignPath(...parts: string[]): string {
  return fixturePath('foreign', ...parts);
}

/**
 * The recordings of `folder` that have an expected file, by the expected files: `fixtures/foreign/real/` commits only
 * those (the recordings come from other projects by way of shared/), so a test can report a missing one as skipped,
 * by name (`absentRecording`), instead of leaving it out unseen.
 */
export function expectedRecordings(folder: string): string[] {
  const dir = foreignPath(folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.expected.json'))
    .map((name) => name.slice(0, -'.expected.json'.length))
    .sort();
}

/** A skip reason when the recording at `relative` is not there (see `expectedRecordings`), else false. */
export function absentRecording(relative: string): string | false {
  return !existsSync(foreignPath(relative)) && `${relative} is not in fixtures/foreign (it comes from shared/)`;
}

export function loadExpected(relative: string): Expected {
  return JSON.parse(readFileSync(foreignPath(`${relative}.expected.json`), 'utf8')) as Expected;
}

/**
 * The µs our readers must report for a nanosecond time (decimal string): floored to the µs, relative to the
 * recording start, which is the earliest log time floored to the ms.
 */
export function expectedUs(ns: string, startMs: number): number {
  const t = BigInt(ns);
  const start = BigInt(startMs) * 1_000_000n;
  const rel = t - start;
  const q = rel / 1000n;
  return Number(rel < 0n && q * 1000n !== rel ? q - 1n : q);
}

/** The recording start (ms) the reference messages imply: the earliest log time, floored to the ms. */
export function expectedStartMs(messages: readonly { log_time_ns: string }[]): number {
  let min: bigint | undefined;
  for (const m of messages) {
    const t = BigInt(m.log_time_ns);
    if (min === undefined || t < min) min = t;
  }
  return min === undefined ? 0 : Number(min / 1_000_000n);
}
