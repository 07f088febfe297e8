// bench/results/read-rss-<runtime>.json (bench/read-rss.bench.mjs) → tables and goals.
import { sig, times } from '../format.mjs';

const LABEL = {
  fs: 'fs read, 1 MiB chunks (baseline)',
  cursor: 'BagReader cursor',
  iterator: 'BagReader async iterator',
};

export function summarize(r) {
  const size = r.bagMiB >= 1024 ? `${r.bagMiB / 1024} GiB` : `${r.bagMiB} MiB`;
  const cache = r.coldCache ? 'page cache dropped before each measurement' : `page cache NOT dropped (${r.dropCaches})`;
  const base = (format) => r.results.find((x) => x.format === format && x.method === 'fs');
  const rows = r.results.map((x) => [
    `.${x.format}`,
    LABEL[x.method] ?? x.method,
    sig(x.MBps),
    x.method === 'fs' ? '–' : times(x.MBps / base(x.format).MBps),
    sig(x.peakRssMiB),
    sig(x.startRssMiB),
  ]);
  const columns = ['format', 'read', 'MB/s', 'vs fs read', 'peak RSS MiB', 'RSS before reading MiB'];
  const readers = r.results.filter((x) => x.method !== 'fs');
  const peak = Math.max(...readers.map((x) => x.peakRssMiB));
  return {
    tables: [
      {
        section: 'read',
        title: `reading a ${size} bag of 1 MiB frames (no compression) end to end, fresh process each, ${cache}; median of ${r.reps}`,
        columns,
        rows,
      },
      { section: 'memory', title: `peak RSS reading a ${size} bag (VmHWM of the reading process)`, columns, rows },
    ],
    goals: [
      {
        goal: `peak RSS reading a ${size} bag (cursor and async iterator, .vdb and .vcap)`,
        target: '≤ 200 MiB (issue 20)',
        measured: `max ${sig(peak)} MiB; ${readers.map((x) => `.${x.format} ${x.method} ${sig(x.peakRssMiB)}`).join(', ')}`,
        // Only a 2 GiB bag establishes it; smaller quick runs are reported.
        met: r.bagMiB >= 2048 ? peak <= 200 : undefined,
      },
    ],
  };
}
