import { formatVlinkDate, FORMAT_VERSION_TEXT, parseVlinkDate, type RecordingContext } from '@vlink/bag-core';

/**
 * The VLinkHeader entries a writer stores for `context` (format reference §5.2), in VLink's order: `.vcap` and plain
 * `.mcap` write the same header. `dateMs` is the wall-clock time the `date` field shows.
 */
export function writtenHeader(context: RecordingContext, zstd: boolean, dateMs: number): Array<[string, string]> {
  const v = context.version;
  return [
    ['tag', context.tagName],
    ['version', `${v.major}.${v.minor}.${v.patch}`],
    ['compress', zstd ? 'zstd' : 'None'],
    ['process', context.processName],
    ['date', formatVlinkDate(dateMs)],
    ['timezone', String(context.timezone)],
    ['start_timestamp', String(Math.trunc(context.startTimestamp))],
  ];
}

const INTEGER = /^\s*-?\d+\s*$/;
const VERSION = /^\d+\.\d+\.\d+$/;

/** A VLinkHeader that `check()` would not accept, or with a value the reader cannot use. */
export function headerNeedsRepair(m: ReadonlyMap<string, string>): boolean {
  const keys = ['tag', 'version', 'compress', 'process', 'date', 'timezone', 'start_timestamp'];
  if (m.size !== keys.length || !keys.every((k) => m.has(k))) return true;
  return (
    !VERSION.test(m.get('version')!) ||
    !['zstd', 'None'].includes(m.get('compress')!) ||
    !m.get('process') ||
    parseVlinkDate(m.get('date')!) === undefined ||
    !INTEGER.test(m.get('timezone')!) ||
    !INTEGER.test(m.get('start_timestamp')!)
  );
}

/**
 * The VLinkHeader entries in the writer's order: every value of `found` that is usable, the rest derived (compress
 * from the chunks, date and start from each other or the first message) or a placeholder (`Unknown` process, tag
 * `Empty`, timezone 0). Keys that are not VLink's (a garbled name) are left out.
 */
export function repairedHeader(
  found: ReadonlyMap<string, string> | undefined,
  compress: string,
  firstMs: number,
): Array<[string, string]> {
  const get = (key: string) => found?.get(key);
  const version = get('version');
  const dateText = get('date');
  const date = dateText === undefined ? undefined : parseVlinkDate(dateText);
  const startText = get('start_timestamp');
  const start = startText !== undefined && INTEGER.test(startText) ? Number.parseInt(startText, 10) : (date ?? firstMs);
  const timezone = get('timezone');
  return [
    ['tag', get('tag') || 'Empty'],
    ['version', version && VERSION.test(version) ? version : FORMAT_VERSION_TEXT],
    ['compress', get('compress') === 'zstd' || get('compress') === 'None' ? get('compress')! : compress],
    ['process', get('process') || 'Unknown'],
    ['date', date !== undefined ? dateText! : formatVlinkDate(start)],
    ['timezone', timezone !== undefined && INTEGER.test(timezone) ? timezone : '0'],
    ['start_timestamp', String(start)],
  ];
}
