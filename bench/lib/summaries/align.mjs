// bench/results/align-<runtime>.json (bench/align.bench.mjs) → tables and goals (issue 23).
import { sig, times } from '../format.mjs';

export function summarize(r) {
  const s = r.session;
  const tables = [
    {
      section: 'align',
      title: `${s.seconds / 60}-minute session (${s.messages.toLocaleString('en-US')} JSON messages, ${s.bagMiB} MiB .vcap): base /camera/front on publish times, /state linear, /action previous, tolerance 50 ms, ffill (ours: ${r.contenders.align}; baseline: ${r.contenders.decode})`,
      columns: ['format', 'rows', 'columns', 'rows/s', 'frames/s', 'plain decode frames/s', 'ratio', 'peak RSS growth'],
      rows: r.cases.map((c) => [
        c.format,
        c.rows.toLocaleString('en-US'),
        String(c.columns),
        sig(c.rowsPerS),
        sig(c.framesPerS),
        sig(r.decode.framesPerS),
        times(c.ratioToDecode),
        `${c.peakRssGrowthMiB} MiB`,
      ]),
    },
  ];
  return {
    tables,
    goals: [
      {
        goal: '`align` throughput (rows/s, decoded) for a 10-minute session',
        target: 'reported (no target in the issue)',
        measured: r.cases
          .map((c) => `${c.format} ${sig(c.rowsPerS)} rows/s (${times(c.ratioToDecode)} plain decode)`)
          .join(', '),
        met: undefined,
      },
    ],
  };
}
