import { readFileSync, statSync } from 'node:fs';
import { summaryPath } from '@vlink/bag-core';
import type { Statistics } from '../mcap/records.js';
import type { HeaderFallback } from './vlink-header.js';

/** What a summary sidecar (`<file>.json`, written beside a recording at close and after `fix`) says of its header. */
export interface SidecarFacts {
  startTimestamp: number;
  blankDuration: number;
  totalDuration: number;
  messageCount: number;
  tagName: string | undefined;
  processName: string | undefined;
  timezone: number | undefined;
  dateTime: string | undefined;
}

const MAX_SIDECAR_BYTES = 64 * 1024 * 1024;

/**
 * The sidecar beside `path`, if there is one that parses with the fields a repair may use; anything else (no file,
 * not JSON, fields missing or of the wrong type) is no sidecar. Read only by a repair whose file lost its
 * VLinkHeader: the sidecar is then the only other place that knows the recording's start.
 */
export function readSidecarFacts(path: string): SidecarFacts | undefined {
  let value: unknown;
  try {
    const file = summaryPath(path);
    // A sidecar is a few KiB per url; anything huge is not one worth reading into memory.
    if (statSync(file).size > MAX_SIDECAR_BYTES) return undefined;
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const number = (key: string) =>
    typeof v[key] === 'number' && Number.isFinite(v[key]) ? (v[key] as number) : undefined;
  const text = (key: string) => (typeof v[key] === 'string' && v[key] !== '' ? (v[key] as string) : undefined);
  const startTimestamp = number('startTimestamp');
  const blankDuration = number('blankDuration');
  const totalDuration = number('totalDuration');
  const messageCount = number('messageCount');
  if (startTimestamp === undefined || !Number.isInteger(startTimestamp) || startTimestamp < 0) return undefined;
  if (blankDuration === undefined || totalDuration === undefined || messageCount === undefined) return undefined;
  const timezone = number('timezone');
  return {
    startTimestamp,
    blankDuration,
    totalDuration,
    messageCount,
    tagName: text('tagName'),
    processName: text('processName'),
    timezone: timezone !== undefined && Number.isInteger(timezone) ? timezone : undefined,
    dateTime: text('dateTime'),
  };
}

/** Slack for the sidecar's durations, which are ms with a fraction or rounded (the file's times are ns). */
const SLACK_MS = 1;

/** What outside the file knows of its VLinkHeader. */
export interface HeaderSources {
  /** The file's summary sidecar, if any. */
  sidecar?: SidecarFacts | undefined;
  /**
   * The recording's start by the manifest of the split recording the file is a segment of (every segment's header
   * has that start): taken over the sidecar, and over the values of a header whose CRC says it is damaged.
   */
  recordingStart?: number;
}

/**
 * Where a repair that lost the VLinkHeader takes the start (and, from a sidecar, the header's other values), best
 * first: the manifest of its split recording; the sidecar, when what it says agrees with what the file still says
 * (its statistics: the message count and the first message's time; without them, the messages kept lie within the
 * sidecar's span), so a sidecar of another recording is never taken for this one's; else the first message by the
 * file's statistics (lost messages included); else the first message kept.
 */
export function headerFallback(
  { sidecar, recordingStart }: HeaderSources,
  statistics: Statistics | undefined,
  kept: { firstNs: bigint; lastNs: bigint } | undefined,
): HeaderFallback {
  if (recordingStart !== undefined && recordingStart > 0)
    return { startMs: recordingStart, from: "its split recording's manifest", confirmed: true };
  const stats = statistics && statistics.messageCount > 0n ? statistics : undefined;
  if (sidecar && sidecarAgrees(sidecar, stats, kept)) {
    return {
      startMs: sidecar.startTimestamp,
      from: 'the summary sidecar',
      confirmed: true,
      ...(sidecar.tagName === undefined ? {} : { tag: sidecar.tagName }),
      ...(sidecar.processName === undefined ? {} : { process: sidecar.processName }),
      ...(sidecar.timezone === undefined ? {} : { timezone: sidecar.timezone }),
      ...(sidecar.dateTime === undefined ? {} : { date: sidecar.dateTime }),
    };
  }
  if (stats)
    return { startMs: Number(stats.messageStartTime / 1_000_000n), from: "the file's first message (statistics)" };
  return { startMs: kept ? Number(kept.firstNs / 1_000_000n) : 0, from: 'the first message kept' };
}

function sidecarAgrees(
  sidecar: SidecarFacts,
  stats: Statistics | undefined,
  kept: { firstNs: bigint; lastNs: bigint } | undefined,
): boolean {
  const ms = (ns: bigint) => Number(ns) / 1e6;
  const start = sidecar.startTimestamp;
  if (stats) {
    return (
      sidecar.messageCount === Number(stats.messageCount) &&
      Math.abs(start + sidecar.blankDuration - ms(stats.messageStartTime)) <= SLACK_MS
    );
  }
  if (!kept) return false;
  return ms(kept.firstNs) >= start - SLACK_MS && ms(kept.lastNs) <= start + sidecar.totalDuration + SLACK_MS;
}
