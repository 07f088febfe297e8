// bench/results/ab-builds-<runtime>.json (bench/ab-builds.mjs, run by hand against a second built checkout) → a table
// and the goal of issue 27: a redesign keeps the write and read paths within 5 % of the build before it.
import { median, num, sig } from '../format.mjs';

const size = (bytes) => (bytes >= 1 << 20 ? `${bytes >> 20} MiB` : bytes >= 1024 ? `${bytes >> 10} KiB` : `${bytes} B`);

const speedText = (x) => `${x.speed.toFixed(2)}× [${x.speed95[0].toFixed(2)}, ${x.speed95[1].toFixed(2)}]`;

const SLOWER = 'slower by more than 5 %';
const WITHIN = 'within 5 % or better';
const counts = (all) => ({
  within: all.filter((x) => x.verdict === WITHIN).length,
  slower: all.filter((x) => x.verdict === SLOWER).length,
});

/**
 * The goal row of one kind of run: `pick` gives a case's comparison (the first run, or the warm one). Runs with a
 * process per build are judged at equal copy speed (`adjusted`, bench/lib/ab-stats.mjs) when they have it; the
 * paired verdicts' counts are given beside them.
 */
function goal(r, which, pick) {
  const adjusted = r.results.every((x) => pick(x).adjusted);
  const judged = (x) => (adjusted ? pick(x).adjusted : pick(x));
  const all = r.results.map(judged);
  const { within, slower } = counts(all);
  const named = slower
    ? ` (slower: ${r.results
        .filter((x) => judged(x).verdict === SLOWER)
        .map((x) => `${x.op} .${x.format} ${x.mode} ${size(x.size)} ${judged(x).speed.toFixed(2)}×`)
        .join('; ')})`
    : '';
  const paired = counts(r.results.map(pick));
  return {
    goal: `write and read paths of ${r.head} vs ${r.base}, ${which}${r.isolated ? ', a process per build' : ''}${adjusted ? ', at equal copy speed' : ''} (issue 27: a redesign stays within 5 %)`,
    target: 'no case slower by more than 5 % (95 % interval)',
    measured:
      `${within} of ${all.length} cases within 5 % or faster, ${slower} slower${named}, ${all.length - within - slower} not resolved` +
      (adjusted ? `; by pairs alone ${paired.within} within, ${paired.slower} slower` : ''),
    met: slower === 0 && within === all.length,
  };
}

const verdictText = (x) => `${speedText(x)} ${x.verdict}`;
const adjustedText = (x) => (x.adjusted ? `${verdictText(x.adjusted)}, slope ${x.adjusted.slope.toFixed(2)}` : '');

export function summarize(r) {
  // Results from before the warm runs were added have none; from before the copy-speed covariate, no `adjusted`.
  const warm = r.results.every((x) => x.warm);
  const adjusted = r.results.every((x) => x.adjusted);
  const rows = r.results.map((x) => [
    `${x.op} .${x.format} (${x.mode})`,
    `${size(x.size)} × ${num(x.frames)}`,
    sig(x.baseMs),
    sig(x.headMs),
    ...(adjusted ? [verdictText(x), adjustedText(x)] : [speedText(x), x.verdict]),
    ...(warm
      ? [
          sig(x.warm.baseMs),
          sig(x.warm.headMs),
          ...(adjusted ? [verdictText(x.warm), adjustedText(x.warm)] : [speedText(x.warm), x.warm.verdict]),
        ]
      : []),
  ]);
  const speedColumns = (prefix) =>
    adjusted
      ? [`${prefix}speed by pairs`, `${prefix}speed at equal copy speed`]
      : [`${prefix}speed`, `${prefix}verdict`];
  return {
    tables: [
      {
        section: 'ab-builds',
        title: `${r.head} (head) against ${r.base} (base), ${r.isolated ? 'a child process per build and repetition (after an untimed pass)' : 'one process'}, ${r.reps} alternating repetitions${r.pooled ? ` (runs pooled: ${r.pooled.map((p) => `${p.reps} at ${p.head}`).join(', ')})` : ''}, files on ${r.files}; speed = base ms / head ms per pair of repetitions (median, bootstrap 95 % interval)${adjusted ? `, and at equal copy speed (a fit over every process against its memory-copy time, with its slope; copy ms, median of the processes: head ${median(r.copyMs.head).toFixed(1)}, base ${median(r.copyMs.base).toFixed(1)})` : ''}${warm ? `; first run of a case after the others, then ${(r.warmRuns ?? 1) > 1 ? `the median of ${r.warmRuns} warm runs` : 'a warm run'} right after it` : ''}`,
        columns: [
          'case',
          'frames',
          'base ms',
          'head ms',
          ...speedColumns(''),
          ...(warm ? ['warm base ms', 'warm head ms', ...speedColumns('warm ')] : []),
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
