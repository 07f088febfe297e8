// bench/results/interop-<runtime>.json (bench/interop.bench.mjs) → tables and goals.
import { num, sig } from '../format.mjs';

export function summarize(r) {
  const table = {
    section: 'interop',
    title: `Foreign-format import: open + read every message, ms (median of ${r.reps}) and MB/s of file; ratio = reference time / ours`,
    columns: [
      'format',
      'file MiB',
      'messages',
      'ours (async iterator)',
      'ours (cursor)',
      'reference',
      'reference reader',
      'ratio',
      'ratio (cursor)',
    ],
    rows: r.results.map((x) => {
      const ours = x.contenders['ours (async iterator)'];
      const cursor = x.contenders['ours (cursor)'];
      const ref = x.contenders[x.reference];
      return [
        `${x.format} (${x.variant})`,
        sig(x.fileBytes / 2 ** 20),
        num(x.messages),
        `${sig(ours.medianMs)} ms (${sig(ours.MBs)} MB/s)`,
        `${sig(cursor.medianMs)} ms (${sig(cursor.MBs)} MB/s)`,
        `${sig(ref.medianMs)} ms (${sig(ref.MBs)} MB/s)`,
        x.reference,
        `**${x.ratio.toFixed(2)}×**`,
        `${x.ratioCursor.toFixed(2)}×`,
      ];
    }),
  };
  return {
    tables: [table],
    goals: r.results.map((x) => ({
      goal: `${x.format} (${x.variant}) import vs ${x.reference}, BagReader's async iterator`,
      target: '≥ 1×',
      measured: `${x.ratio.toFixed(2)}× (cursor ${x.ratioCursor.toFixed(2)}×)`,
      met: x.ratio >= 1,
    })),
  };
}
