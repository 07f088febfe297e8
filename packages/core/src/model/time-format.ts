/** VLink's header date: local wall clock `YYYY/MM/DD hh:mm:ss:mmm` (strftime `%Y/%m/%d %H:%M:%S` + `:ms`). */
export function formatVlinkDate(epochMs: number): string {
  const d = new Date(epochMs);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${d.getFullYear()}/${p(d.getMonth() + 1)}/${p(d.getDate())} ` +
    `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`
  );
}

/** Segment/dump names by time: local `YYYY-MM-DD_hh-mm-ss-mmm` (format reference §4.3). */
export function formatFileTime(epochMs: number): string {
  const d = new Date(epochMs);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return (
    `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}_` +
    `${p(d.getHours())}-${p(d.getMinutes())}-${p(d.getSeconds())}-${p(d.getMilliseconds(), 3)}`
  );
}

/**
 * Parses a VLink date (`%Y/%m/%d %H:%M:%S` with optional `:ms`) as local time into ms since epoch; the fallback when
 * a manifest or MCAP header lacks `start_timestamp` (format reference §4.4 step 6). Returns undefined when it does not parse.
 */
export function parseVlinkDate(text: string): number | undefined {
  const m = /^(\d{4})\/(\d{1,2})\/(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})(?::(\d{1,3}))?$/.exec(text.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, ms] = m.map(Number) as number[];
  const value = new Date(y!, mo! - 1, d!, h!, mi!, s!, Number.isNaN(ms) ? 0 : (ms ?? 0)).getTime();
  return Number.isNaN(value) ? undefined : value;
}

/** Local UTC offset in minutes east of UTC (480 for UTC+8), as VLink's `get_timezone_diff`. */
export function localTimezoneMinutes(epochMs = Date.now()): number {
  // `|| 0`: UTC would otherwise be −0, which no file stores and strict comparisons tell from 0.
  return -new Date(epochMs).getTimezoneOffset() || 0;
}
