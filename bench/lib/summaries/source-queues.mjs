// bench/results/source-queues-<runtime>.json (bench/source-queues.bench.mjs) → table and goal (issue 23).
import { sig, times } from '../format.mjs';

const size = (b) => (b >= 1024 ? `${b / 1024} KiB` : `${b} B`);

export function summarize(r) {
  return {
    tables: [
      {
        section: 'writer',
        title: `writer throughput with per-source queues vs one queue, 8 urls, .vcap (${r.contenders.loop}; baseline: ${r.contenders.oneQueue}; per source: ${r.contenders.perSource}; own limits: ${r.contenders.perLimits})`,
        columns: [
          'payload',
          'frames',
          'one queue frames/s',
          'per source frames/s',
          'ratio',
          'own limits frames/s',
          'ratio',
        ],
        rows: r.rows.map((row) => [
          size(row.size),
          row.frames.toLocaleString('en-US'),
          sig(row.oneQueueFramesPerS),
          sig(row.perSourceFramesPerS),
          times(row.perSourceRatio),
          sig(row.perLimitsFramesPerS),
          times(row.perLimitsRatio),
        ]),
      },
    ],
    goals: [
      {
        goal: 'writer throughput with per-source queues (8 urls, 64 B and 4 KiB) vs one queue',
        target: '≥ 90 %',
        measured: r.rows
          .map((row) => `${size(row.size)} ${times(row.perSourceRatio)} (own limits ${times(row.perLimitsRatio)})`)
          .join(', '),
        met: r.quick ? undefined : r.rows.every((row) => Math.min(row.perSourceRatio, row.perLimitsRatio) >= 0.9),
      },
    ],
  };
}
