import { InvalidArgumentError } from 'commander';

/**
 * Wall-clock datetimes on the command line, as Apollo's `cyber_recorder -b/-e` (`2026-03-17-10:00:05`) and VLink's
 * `--local_begin_time`/`--utc_begin_time` take them: `YYYY-MM-DD[ T-]HH:MM:SS[.fff]`, optionally with `Z` or `±HH:MM`.
 * Without a zone the text is local time, or UTC when `utc` is set.
 */
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[ T-](\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-]\d{2}:?\d{2})?$/i;

export function isDatetime(text: string): boolean {
  return DATETIME.test(text.trim());
}

/** Milliseconds since the epoch for a datetime text; throws InvalidArgumentError with the accepted shape. */
export function parseDatetimeMs(text: string, utc: boolean): number {
  const m = DATETIME.exec(text.trim());
  if (!m) throw new InvalidArgumentError('not a datetime (YYYY-MM-DD HH:MM:SS[.fff], local time unless Z or ±HH:MM)');
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = frac ? Math.round(Number(`0${frac}`) * 1000) : 0;
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms] as const;
  let at: number;
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
    at = Date.UTC(...fields) - offsetMin * 60_000;
  } else if (zone || utc) {
    at = Date.UTC(...fields);
  } else {
    at = new Date(...fields).getTime();
  }
  if (!Number.isFinite(at) || Number(mo) > 12 || Number(d) > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60)
    throw new InvalidArgumentError('not a valid date and time');
  return at;
}

/** `2026-03-17 10:00:05.123` in local time or UTC (with ` UTC`), for `--local-time`/`--utc-time` displays. */
export function formatWallTime(ms: number, utc: boolean): string {
  const date = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const [y, mo, d, h, mi, s, f] = utc
    ? [
        date.getUTCFullYear(),
        date.getUTCMonth() + 1,
        date.getUTCDate(),
        date.getUTCHours(),
        date.getUTCMinutes(),
        date.getUTCSeconds(),
        date.getUTCMilliseconds(),
      ]
    : [
        date.getFullYear(),
        date.getMonth() + 1,
        date.getDate(),
        date.getHours(),
        date.getMinutes(),
        date.getSeconds(),
        date.getMilliseconds(),
      ];
  return `${y}-${p(mo)}-${p(d)} ${p(h)}:${p(mi)}:${p(s)}.${p(f, 3)}${utc ? ' UTC' : ''}`;
}
