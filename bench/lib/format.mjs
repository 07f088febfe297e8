// Number formatting and Markdown tables for the generated BENCHMARKS.md.

const isNum = (x) => typeof x === 'number' && Number.isFinite(x);

/** Fixed digits with thousands separators; '–' for missing values. */
export function num(x, digits = 0) {
  if (!isNum(x)) return '–';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Three significant digits, for values whose magnitude varies a lot (µs, MB/s). */
export function sig(x) {
  if (!isNum(x)) return '–';
  if (Math.abs(x) >= 1000) return num(x, 0);
  return String(Number(x.toPrecision(3)));
}

/** A speed ratio: 1.00× means as fast as the baseline. */
export const times = (x) => (isNum(x) ? `${x.toFixed(2)}×` : '–');

/** A ratio as a percentage of the baseline. */
export const pct = (x) => (isNum(x) ? `${Math.round(x * 100)} %` : '–');

export const MiB = 1024 * 1024;
/** MiB/s → MB/s (10^6 bytes). */
export const mibToMB = (x) => (isNum(x) ? (x * MiB) / 1e6 : undefined);

export const sizeLabel = (bytes) =>
  bytes >= MiB && bytes % MiB === 0
    ? `${bytes / MiB} MiB`
    : bytes >= 1024 && bytes % 1024 === 0
      ? `${bytes / 1024} KiB`
      : `${bytes} B`;

export const median = (xs) => {
  const s = xs.filter(isNum).sort((a, b) => a - b);
  if (s.length === 0) return undefined;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const escapeCell = (cell) =>
  String(cell ?? '–')
    .replace(/\|/g, '\\|')
    .replace(/\n/g, ' ');

/** A Markdown table; columns whose cells all start with a number (or '–') are right-aligned. */
export function table(titles, rows) {
  const right = titles.map(
    (_, i) => i > 0 && rows.length > 0 && rows.every((r) => /^[-–\d]/.test(String(r[i] ?? '–'))),
  );
  const head = `| ${titles.map(escapeCell).join(' | ')} |`;
  const rule = `|${right.map((r) => (r ? '---:' : '---')).join('|')}|`;
  return [head, rule, ...rows.map((r) => `| ${r.map(escapeCell).join(' | ')} |`)].join('\n');
}
