/**
 * Times in the player are ms since recording start (as the API's). They are shown relative (`1:02.345`), as the
 * recording's local wall clock (its `Info.timezone`, minutes east of UTC: the robot's clock, not the viewer's) or UTC.
 */
export type TimeMode = 'relative' | 'local' | 'utc';

export interface Clock {
  mode: TimeMode;
  /** Recording start, ms since the epoch. */
  startMs: number;
  /** Minutes east of UTC used for `local`. */
  timezone: number;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

export function formatRelative(ms: number, precision = 3): string {
  const sign = ms < 0 ? '-' : '';
  const abs = Math.abs(ms);
  const totalSeconds = Math.floor(abs / 1000);
  const h = Math.floor(totalSeconds / 3600);
  const m = Math.floor((totalSeconds % 3600) / 60);
  const s = totalSeconds % 60;
  const frac = precision > 0 ? `.${pad(Math.floor(abs % 1000), 3).slice(0, precision)}` : '';
  return h > 0 ? `${sign}${h}:${pad(m)}:${pad(s)}${frac}` : `${sign}${m}:${pad(s)}${frac}`;
}

export function tzLabel(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/** The wall-clock parts of `ms` in the clock's zone (`local` = the recording's offset). */
function wall(clock: Clock, ms: number): Date {
  const epoch = clock.startMs + ms + (clock.mode === 'local' ? clock.timezone * 60_000 : 0);
  return new Date(epoch);
}

/** The full form, for the time field and the inspector. */
export function formatTime(clock: Clock, ms: number): string {
  if (clock.mode === 'relative') return formatRelative(ms);
  const d = wall(clock, ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`
  );
}

/** A short form for axis ticks, precise enough for a tick step of `stepMs`. */
export function formatTick(clock: Clock, ms: number, stepMs: number): string {
  const precision = stepMs >= 1000 ? 0 : stepMs >= 100 ? 1 : stepMs >= 10 ? 2 : 3;
  if (clock.mode === 'relative') return formatRelative(ms, precision);
  const d = wall(clock, ms);
  const base = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return precision > 0 ? `${base}.${pad(d.getUTCMilliseconds(), 3).slice(0, precision)}` : base;
}

/**
 * Reads a time typed into the time field, in the current mode: relative `[[h:]m:]s[.fff]` (plain seconds too), or a
 * wall-clock `hh:mm:ss[.fff]` / `YYYY-MM-DD hh:mm:ss[.fff]` in the clock's zone (the recording's date when omitted).
 * Returns ms since recording start, or undefined when it does not parse.
 */
export function parseTime(clock: Clock, text: string): number | undefined {
  const t = text.trim();
  if (clock.mode === 'relative' || /^[+-]?\d+(\.\d+)?$/.test(t)) {
    const m = /^([+-])?(?:(?:(\d+):)?(\d+):)?(\d+(?:\.\d+)?)$/.exec(t);
    if (!m) return undefined;
    const [, sign, h, mi, s] = m;
    const ms = ((Number(h ?? 0) * 60 + Number(mi ?? 0)) * 60 + Number(s)) * 1000;
    return sign === '-' ? -ms : ms;
  }
  const m = /^(?:(\d{4})-(\d{1,2})-(\d{1,2})[ T])?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?$/.exec(t);
  if (!m) return undefined;
  const offset = clock.mode === 'local' ? clock.timezone * 60_000 : 0;
  const startWall = new Date(clock.startMs + offset);
  const y = m[1] ? Number(m[1]) : startWall.getUTCFullYear();
  const mo = m[2] ? Number(m[2]) - 1 : startWall.getUTCMonth();
  const d = m[3] ? Number(m[3]) : startWall.getUTCDate();
  const ms = m[7] ? Number(m[7].padEnd(3, '0')) : 0;
  const epochWall = Date.UTC(y, mo, d, Number(m[4]), Number(m[5]), Number(m[6]), ms);
  return epochWall - offset - clock.startMs;
}

/** 1, 2, 5 × 10^k ms: the tick step that puts ticks about `targetPx` apart. */
export function tickStep(msPerPx: number, targetPx = 110): number {
  const raw = msPerPx * targetPx;
  const pow = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-3)));
  for (const f of [1, 2, 5, 10]) if (f * pow >= raw) return f * pow;
  return 10 * pow;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  return formatRelative(ms, 1);
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v >= 100 ? 0 : 1)} ${units[i]}`;
}

export const formatCount = (n: number) => n.toLocaleString('en-US');
