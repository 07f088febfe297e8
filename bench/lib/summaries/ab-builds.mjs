// bench/results/ab-builds-<runtime>.json (bench/ab-builds.mjs, run by hand against a second built checkout) → a table
// and the goal of issue 27: a redesign keeps the write and read paths within 5 % of the build before it.
import { num, sig } from '../format.mjs';

const size = (bytes) => (bytes >= 1 << 20 ? `${bytes >> 20} MiB` : bytes >= 1024 ? `${bytes >> 10} KiB` : `${bytes} B`);

const speedText = (x) => `${x.speed.toFixed(2)}× [${x.speed95[0].toFixed(2)}, ${x.speed95[1].toFixed(2)}]`;

/** The goal row of one kind of run: `pick` gives a case's comparison (the first run, or the warm one). */
function goal(r, which, pick) {
  const all = r.results.map(pick);
  const slower = all.filter((x) => x.verdict === 'slower by more than 5 %');
  const resolved = all.filter((x) => x.verdict === 'within 5 % or better');
  const named = slower.length
    ? ` (slower: ${r.results
        .filter((x) => pick(x).verdict === 'slower by more than 5 %')
        .map((x) => `${x.op} .${x.format} ${x.mode} ${size(x.size)} ${pick(x).speed.toFixed(2)}×`)
        .join('; ')})`
    : '';
  return {
    goal: `write and read paths of ${r.head} vs ${r.base}, ${which}${r.isolated ? ', a process per build' : ''} (issue 27: a redesign stays within 5 %)`,
    target: 'no case slower by more than 5 % (95 % interval)',
    measured: `${resolved.length} of ${all.length} cases within 5 % or faster, ${slower.length} slower${named}, ${all.length - resolved.length - slower.length} not resolved`,
    met: slower.length === 0 && resolved.length === all.length,
  };
}

export function summarize(r) {
  // Results from before the warm runs were added have none.
  const warm = r.results.every((x) => x.warm);
  const rows = r.results.map((x) => [
    `${x.op} .${x.format} (${x.mode})`,
    `${size(x.size)} × ${num(x.frames)}`,
    sig(x.baseMs),
    sig(x.headMs),
    speedText(x),
    x.verdict,
    ...(warm ? [sig(x.warm.baseMs), sig(x.warm.headMs), speedText(x.warm), x.warm.verdict] : []),
  ]);
  return {
    tables: [
      {
        section: 'ab-builds',
        title: `${r.head} (head) against ${r.base} (base), ${r.isolated ? 'a child process per build and repetition (after an untimed pass)' : 'one process'}, ${r.reps} alternating repetitions, files on ${r.files}; speed = base ms / head ms per pair of repetitions (median, bootstrap 95 % interval)${warm ? `; first run of a case after the others, then ${(r.warmRuns ?? 1) > 1 ? `the median of ${r.warmRuns} warm runs` : 'a warm run'} right after it` : ''}`,
        columns: [
          'case',
          'frames',
          'base ms',
          'head ms',
          'speed',
          'verdict',
          ...(warm ? ['warm base ms', 'warm head ms', 'warm speed', 'warm verdict'] : []),
        ],
        rows,
      },
    ],
    goals: [
      goal(r, warm ? 'first run of each case' : 'as run', (x) => x),
      ...(warm ? [goal(r, 'warm run of each case', (x) => x.warm)] : []),
    ],
  };
}
