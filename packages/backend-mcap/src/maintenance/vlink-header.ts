import { formatVlinkDate, FORMAT_VERSION_TEXT, parseVlinkDate, type RecordingContext } from '@vlink/bag-core';
import { HEADER_CRC_KEY, headerIntact, withHeaderCrc } from '../vcap/header-crc.js';

/**
 * The VLinkHeader entries a writer stores for `context` (format reference §5.2), in VLink's order: `.vcap` and plain
 * `.mcap` write the same header. `dateMs` is the wall-clock time the `date` field shows.
 */
export function writtenHeader(context: RecordingContext, zstd: boolean, dateMs: number): Array<[string, string]> {
  const v = context.version;
  return withHeaderCrc([
    ['tag', context.tagName],
    ['version', `${v.major}.${v.minor}.${v.patch}`],
    ['compress', zstd ? 'zstd' : 'None'],
    ['process', context.processName],
    ['date', formatVlinkDate(dateMs)],
    ['timezone', String(context.timezone)],
    ['start_timestamp', String(Math.trunc(context.startTimestamp))],
  ]);
}

const INTEGER = /^\s*-?\d+\s*$/;
const VERSION = /^\d+\.\d+\.\d+$/;

/** A VLinkHeader that `check()` would not accept, or with a value the reader cannot use or trust. */
export function headerNeedsRepair(m: ReadonlyMap<string, string>): boolean {
  const keys = ['tag', 'version', 'compress', 'process', 'date', 'timezone', 'start_timestamp'];
  if (m.size !== keys.length + (m.has(HEADER_CRC_KEY) ? 1 : 0) || !keys.every((k) => m.has(k))) return true;
  return (
    headerIntact(m) === false ||
    !VERSION.test(m.get('version')!) ||
    !['zstd', 'None'].includes(m.get('compress')!) ||
    !m.get('process') ||
    parseVlinkDate(m.get('date')!) === undefined ||
    !INTEGER.test(m.get('timezone')!) ||
    !INTEGER.test(m.get('start_timestamp')!)
  );
}

/**
 * What to write where the file no longer says it: the start (always) and, when a source outside the file still knows
 * them (the summary sidecar), the header's other values.
 */
export interface HeaderFallback {
  startMs: number;
  /** Where the values come from, for the repair's report (e.g. "the summary sidecar"). */
  from: string;
  /**
   * Whether a source outside the file confirmed them (the manifest of its split recording, or the summary sidecar
   * agreeing with the file's statistics): then they are taken over the values of a header whose CRC says it is damaged.
   */
  confirmed?: boolean;
  tag?: string;
  process?: string;
  timezone?: number;
  /** VLink's `date` text. */
  date?: string;
}

/**
 * The VLinkHeader entries in the writer's order: every value of `found` that is usable, the rest from `fallback`
 * where it has them, derived (compress from the chunks, date and start from each other) or a placeholder (`Unknown`
 * process, tag `Empty`, timezone 0). Keys that are not VLink's (a garbled name) are left out, and a fresh
 * `header_crc32` is added. `fromFallback` names the keys `fallback` supplied. `damaged`: `found`'s CRC does not match
 * its values, so any of them may be wrong; a `confirmed` fallback's values are then taken over them.
 */
export function repairedHeader(
  found: ReadonlyMap<string, string> | undefined,
  compress: string,
  fallback: HeaderFallback,
): { entries: Array<[string, string]>; fromFallback: string[]; damaged: boolean } {
  const damaged = found !== undefined && headerIntact(found) === false;
  const confirmedValues: Record<string, unknown> = {
    tag: fallback.tag,
    process: fallback.process,
    timezone: fallback.timezone,
    date: fallback.date,
    start_timestamp: fallback.startMs,
  };
  // A damaged header's value gives way to a confirmed one from outside the file.
  const get = (key: string) =>
    damaged && fallback.confirmed && confirmedValues[key] !== undefined ? undefined : found?.get(key);
  const fromFallback: string[] = [];
  const orElse = (key: string, own: string | undefined, theirs: string | undefined, placeholder: () => string) => {
    if (own !== undefined) return own;
    if (theirs !== undefined) {
      fromFallback.push(key);
      return theirs;
    }
    return placeholder();
  };
  const version = get('version');
  const ownDate = get('date');
  const date = ownDate === undefined ? undefined : parseVlinkDate(ownDate);
  const startText = get('start_timestamp');
  const ownStart = startText !== undefined && INTEGER.test(startText) ? Number.parseInt(startText, 10) : date;
  const start = ownStart ?? fallback.startMs;
  if (ownStart === undefined) fromFallback.push('start_timestamp');
  const timezone = get('timezone');
  const theirDate =
    fallback.date !== undefined && parseVlinkDate(fallback.date) !== undefined ? fallback.date : undefined;
  const entries: Array<[string, string]> = [
    ['tag', orElse('tag', get('tag') || undefined, fallback.tag, () => 'Empty')],
    ['version', version && VERSION.test(version) ? version : FORMAT_VERSION_TEXT],
    ['compress', get('compress') === 'zstd' || get('compress') === 'None' ? get('compress')! : compress],
    ['process', orElse('process', get('process') || undefined, fallback.process, () => 'Unknown')],
    ['date', orElse('date', date !== undefined ? ownDate : undefined, theirDate, () => formatVlinkDate(start))],
    [
      'timezone',
      orElse(
        'timezone',
        timezone !== undefined && INTEGER.test(timezone) ? timezone : undefined,
        fallback.timezone === undefined ? undefined : String(fallback.timezone),
        () => '0',
      ),
    ],
    ['start_timestamp', String(start)],
  ];
  return { entries: withHeaderCrc(entries), fromFallback, damaged };
}
