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
  const python = r.results.filter((x) => x.python);
  const pythonTable = {
    section: 'interop',
    title: `The Python reference readers on the same files (\`VLINK_BENCH_REFERENCE_PYTHON\` or \`--python\`; another runtime, so no goal): ms (median of ${r.reps}); ratio = Python time / ours (async iterator)`,
    columns: ['format', 'messages', 'Python reader', 'Python', 'messages/s', 'ours (async iterator)', 'ratio'],
    rows: python.map((x) => [
      `${x.format} (${x.variant})`,
      num(x.python.messagesRead),
      x.python.reader,
      `${sig(x.python.medianMs)} ms (${sig(x.python.MBs)} MB/s)`,
      num(Math.round(x.python.msgsPerS)),
      `${sig(x.contenders['ours (async iterator)'].medianMs)} ms`,
      `${x.python.ratio.toFixed(2)}×`,
    ]),
  };
  return {
    tables: python.length > 0 ? [table, pythonTable] : [table],
    goals: r.results.map((x) => ({
      goal: `${x.format} (${x.variant}) import vs ${x.reference}, BagReader's async iterator`,
      target: '≥ 1×',
      measured: `${x.ratio.toFixed(2)}× (cursor ${x.ratioCursor.toFixed(2)}×)`,
      met: x.ratio >= 1,
    })),
  };
}
