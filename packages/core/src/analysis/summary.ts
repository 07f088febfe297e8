import { renameSync, writeFileSync } from 'node:fs';
import { BagError } from '../errors.js';
import { actionText, type ActionText } from '../model/action-type.js';
import type { Frame } from '../model/frame.js';
import type { Info } from '../model/info.js';
import type { FramesOptions } from '../reader/bag-reader.js';
import { urlTiming } from './timing.js';

/**
 * The version of the summary's semantics (format reference §13): bumped whenever a field changes meaning, so a
 * consumer can tell which rules produced a document.
 */
export const SUMMARY_SEMANTICS = 1;

/** One stream (a url AND an action) of a recording, from its log times (`timestamp`) and publish times. */
export interface StreamSummary {
  url: string;
  action: ActionText;
  count: number;
  /** Log times (µs since start) of the first and last message. */
  firstLogUs: number;
  lastLogUs: number;
  /** Smallest and largest publish time (µs since start; the log time where a message has none). */
  firstPublishUs: number;
  lastPublishUs: number;
  /** Actual frequency from log times: `(count − 1) / span`; 0 with fewer than two messages. */
  rateHz: number;
  /** Nearest-rank percentiles of the intervals between consecutive log times (µs); null with fewer than two. */
  intervalUs: { min: number; p50: number; p99: number; max: number } | null;
}

/**
 * The sidecar summary (`<file>.json` beside a recording, and `info --json`): the reader's `Info` plus what only a pass
 * over every message can say. Its JSON Schema is `SUMMARY_JSON_SCHEMA` (also in the docs, format reference §13).
 */
export interface BagSummary extends Info {
  semantics: typeof SUMMARY_SEMANTICS;
  recording: {
    /** Recording start and the last message's log time, ms since the Unix epoch. */
    startTimestamp: number;
    endTimestamp: number;
    /** `clean`: the writer closed the file (`hasCompleted`); `abnormal`: it did not (a crash, a kill, still open). */
    end: 'clean' | 'abnormal';
    /** Segments of a split recording (1 for a single file). */
    segments: number;
  };
  streams: StreamSummary[];
  /** Counters by cause, url → cause → count (`Info.counters`; `{}` when none). */
  counters: Record<string, Record<string, number>>;
  /** What went wrong, as `CODE: message` lines: the writer's failure, damage met while reading. Empty when none. */
  errors: string[];
}

/** What `summarizeBag` reads from; a `BagReader` fits. */
export interface SummarySource {
  getInfo(): Info;
  frames(options?: FramesOptions): AsyncIterable<Frame>;
}

/**
 * Reads every message once (keeping two numbers per message) and returns the summary document. `errors` are added
 * to the document (e.g. the writer's failure); a read error ends the pass and is listed too, with what was read
 * before it summarised.
 */
export async function summarizeBag(
  source: SummarySource,
  options: { errors?: readonly string[]; signal?: AbortSignal } = {},
): Promise<BagSummary> {
  const info = source.getInfo();
  const errors = [...(options.errors ?? [])];
  const streams = new Map<string, { url: string; action: number; log: number[]; publish: number[] }>();
  try {
    const read: FramesOptions = options.signal ? { signal: options.signal } : {};
    for await (const frame of source.frames(read)) {
      const key = `${frame.actionType}\x1f${frame.url}`;
      let s = streams.get(key);
      if (!s) streams.set(key, (s = { url: frame.url, action: frame.actionType, log: [], publish: [] }));
      s.log.push(frame.timestamp);
      s.publish.push(frame.publishTime ?? frame.timestamp);
    }
  } catch (error) {
    const e = BagError.wrap(error, 'IO_ERROR', 'reading failed');
    if (e.code === 'ABORTED') throw e;
    errors.push(`${e.code}: ${e.message}`);
  }
  const out: StreamSummary[] = [];
  let lastLog = 0;
  for (const s of streams.values()) {
    const timing = urlTiming(s.url, s.log);
    let [minLog, maxLog, minPub, maxPub] = [Infinity, -Infinity, Infinity, -Infinity];
    for (let i = 0; i < s.log.length; i++) {
      minLog = Math.min(minLog, s.log[i]!);
      maxLog = Math.max(maxLog, s.log[i]!);
      minPub = Math.min(minPub, s.publish[i]!);
      maxPub = Math.max(maxPub, s.publish[i]!);
    }
    lastLog = Math.max(lastLog, maxLog);
    out.push({
      url: s.url,
      action: actionText(s.action),
      count: s.log.length,
      firstLogUs: minLog,
      lastLogUs: maxLog,
      firstPublishUs: minPub,
      lastPublishUs: maxPub,
      rateHz: timing.rateHz,
      intervalUs: timing.intervalUs,
    });
  }
  out.sort((a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : a.action < b.action ? -1 : a.action > b.action ? 1 : 0));
  return {
    ...info,
    semantics: SUMMARY_SEMANTICS,
    recording: {
      startTimestamp: info.startTimestamp,
      endTimestamp: info.startTimestamp + Math.floor(lastLog / 1000),
      end: info.hasCompleted ? 'clean' : 'abnormal',
      segments: Math.max(1, info.splitCount),
    },
    streams: out,
    counters: info.counters ?? {},
    errors,
  };
}

/** Where the sidecar summary of the recording at `path` lives: `<path>.json` (e.g. `run.vdb.json`). */
export function summaryPath(path: string): string {
  return `${path}.json`;
}

/** Writes `summary` to `summaryPath(path)` whole (a temporary file renamed over it: never half a document). */
export function writeSummaryFile(path: string, summary: BagSummary): string {
  const target = summaryPath(path);
  const temporary = `${target}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(summary, null, 2)}\n`);
    renameSync(temporary, target);
  } catch (error) {
    throw BagError.wrap(error, 'IO_ERROR', 'cannot write the summary sidecar', { file: target });
  }
  return target;
}
