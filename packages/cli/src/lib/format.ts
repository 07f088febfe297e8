/** Human-readable numbers in VLink's style (`12.34MB`, `00:01:05:250`). */

export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return 'Unknown';
  if (bytes < 1024) return `${bytes}B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)}${units[unit]}`;
}

/** `HH:MM:SS` or, with `millis`, `HH:MM:SS:mmm` (VLink's `format_milliseconds`). */
export function formatDuration(ms: number, millis = true): string {
  const total = Math.max(0, Math.floor(ms));
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const hours = Math.floor(total / 3_600_000);
  const minutes = Math.floor((total % 3_600_000) / 60_000);
  const seconds = Math.floor((total % 60_000) / 1000);
  const base = `${p(hours)}:${p(minutes)}:${p(seconds)}`;
  return millis ? `${base}:${p(total % 1000, 3)}` : base;
}

/** ` (UTC)` or ` (Timezone: +08:00:00)`, as VLink prints after the date. */
export function formatTimezone(minutesEast: number): string {
  if (minutesEast === 0) return 'UTC';
  const sign = minutesEast > 0 ? '+' : '-';
  const m = Math.abs(minutesEast);
  return `Timezone: ${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`;
}

export function formatFreq(hz: number): string {
  if (!(hz > 0)) return 'Unknown';
  return hz >= 1_000_000 ? '999999.99Hz' : `${hz.toFixed(2)}Hz`;
}

export function formatLoss(loss: number, precise: boolean): string {
  if (loss < 0) return 'Unknown';
  return `${(loss * 100).toFixed(precise ? 4 : 2)}%`;
}

/** Seconds with µs precision, e.g. `1.234567s`. */
export function formatSeconds(us: number): string {
  return `${(us / 1_000_000).toFixed(6)}s`;
}

export function formatRate(bytesPerSecond: number): string {
  return `${formatSize(Math.round(bytesPerSecond))}/s`;
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(rows: readonly (readonly string[])[], indent = ''): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell));
    });
  return rows.map(
    (row) =>
      indent +
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i]! - displayWidth(cell) + 2)))
        .join(''),
  );
}

/** Columns a string takes in a terminal: CJK and other wide characters count twice. */
export function displayWidth(text: string): number {
  let width = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    width += isWide(code) ? 2 : 1;
  }
  return width;
}

function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
}
