// bench/results/ab-builds-<runtime>.json (bench/ab-builds.mjs, run by hand against a second built checkout) → a table
// and the goal of issue 27: a redesign keeps the write and read paths within 5 % of the build before it.
import { num, sig } from '../format.mjs';

const size = (bytes) => (bytes >= 1 << 20 ? `${bytes >> 20} MiB` : bytes >= 1024 ? `${bytes >> 10} KiB` : `${bytes} B`);

export function summarize(r) {
  const rows = r.results.map((x) => [
    `${x.op} .${x.format} (${x.mode})`,
    `${size(x.size)} × ${num(x.frames)}`,
    sig(x.baseMs),
    sig(x.headMs),
    `${x.speed.toFixed(2)}× [${x.speed95[0].toFixed(2)}, ${x.speed95[1].toFixed(2)}]`,
    x.verdict,
  ]);
  const slower = r.results.filter((x) => x.verdict === 'slower by more than 5 %');
  const resolved = r.results.filter((x) => x.verdict === 'within 5 % or better');
  return {
    tables: [
      {
        section: 'ab-builds',
        title: `${r.head} (head) against ${r.base} (base), one process, ${r.reps} alternating repetitions, files on ${r.files}; speed = base ms / head ms per pair of repetitions (median, bootstrap 95 % interval)`,
        columns: ['case', 'frames', 'base ms', 'head ms', 'speed', 'verdict'],
        rows,
      },
    ],
    goals: [
      {
        goal: `write and read paths of ${r.head} vs ${r.base} (issue 27: a redesign stays within 5 %)`,
        target: 'no case slower by more than 5 % (95 % interval)',
        measured: `${resolved.length} of ${r.results.length} cases within 5 % or faster, ${slower.length} slower, ${r.results.length - resolved.length - slower.length} not resolved`,
        met: slower.length === 0 && resolved.length === r.results.length,
      },
    ],
  };
}
