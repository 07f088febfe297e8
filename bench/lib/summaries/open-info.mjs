// bench/results/open-info-<runtime>.json (bench/open-info.bench.mjs) → tables and goals.
import { num, sig } from '../format.mjs';

export function summarize(r) {
  const table = {
    section: 'open-info',
    title: `BagReader.create + getInfo() of a ${num(r.messages)}-message bag (64 B frames), ms: median over ${r.reps} fresh processes (page cache warm); no baseline`,
    columns: [
      'format',
      'file MiB',
      'open + info',
      'min',
      'max',
      'again in the same process',
      'module import',
      'whole process',
    ],
    rows: r.results.map((x) => [
      `.${x.format}`,
      sig(x.fileBytes / 2 ** 20),
      sig(x.openInfoMs.median),
      sig(x.openInfoMs.min),
      sig(x.openInfoMs.max),
      sig(x.warmOpenInfoMs.median),
      sig(x.importMs.median),
      sig(x.processMs.median),
    ]),
  };
  return {
    tables: [table],
    goals: [
      {
        goal: `open + info of a ${num(r.messages)}-message bag (fresh process)`,
        target: 'absolute (no numeric goal)',
        measured: r.results.map((x) => `.${x.format} ${sig(x.openInfoMs.median)} ms`).join(', '),
        met: null,
      },
    ],
  };
}
