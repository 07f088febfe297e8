// bench/results/health-<runtime>.json (bench/health.bench.mjs) → tables and goals.
import { sig, times } from '../format.mjs';

const GOAL_MS = 50;
/** Two concurrent exports against one: the pool should let readers use more than one core. */
const SCALING_GOAL = 1.3;

export function summarize(r) {
  const servers = [
    ['bag workers', r.pool],
    ['event loop (baseline)', r.baseline],
  ];
  const phases = [
    ['idle', (s) => s.idle],
    ['hostile .vdb opened in a loop (4 clients)', (s) => s.view?.health],
    ['opens that never return (2 clients)', (s) => s.hang?.health],
    ['one client exports (NDJSON, decode)', (s) => s.exportOne?.health],
    ['two clients export (NDJSON, decode)', (s) => s.exportTwo?.health],
  ];
  const latency = {
    section: 'health',
    title: `GET /v1/health latency (ms) every ${r.probeEveryMs} ms on one keep-alive connection, while…; ${r.pool.workers} bag workers (${r.cores} cores) vs \`workers: 0\` (bag work on the event loop, as before); deadlines ${r.deadlineMs / 1000} s; bag ${r.bagMiB} MiB of ~1 KiB JSON messages`,
    columns: ['while', 'server', 'probes', 'p50', 'p99', 'max'],
    rows: phases.flatMap(([label, pick]) =>
      servers.map(([name, s]) => {
        const x = pick(s);
        return x
          ? [label, name, x.n, sig(x.p50), sig(x.p99), sig(x.max)]
          : [label, name, '–', '–', '–', 'not run (it would stop this server for good)'];
      }),
    ),
  };
  const scaling = {
    section: 'health',
    title: `NDJSON export of the ${r.bagMiB} MiB bag with decode=true, MB/s of NDJSON (each client in its own process)`,
    columns: ['server', 'one client', 'two clients, together', 'two / one'],
    rows: servers.map(([name, s]) => [
      name,
      sig(s.exportOne.aggregateMBPerS),
      sig(s.exportTwo.aggregateMBPerS),
      times(s.exportTwo.aggregateMBPerS / s.exportOne.aggregateMBPerS),
    ]),
  };
  const p99 = (x) => x?.health?.p99;
  const hostile = [p99(r.pool.view), p99(r.pool.hang)];
  const ratio = r.pool.exportTwo.aggregateMBPerS / r.pool.exportOne.aggregateMBPerS;
  return {
    tables: [latency, scaling],
    goals: [
      {
        goal: '/v1/health p99 while a hostile bag is being opened',
        target: `≤ ${GOAL_MS} ms`,
        measured: `recursive-view .vdb ${sig(hostile[0])} ms, opens that never return ${sig(hostile[1])} ms (event-loop baseline: ${sig(p99(r.baseline.view))} ms, and stuck for good)`,
        met: hostile.every((x) => typeof x === 'number' && x <= GOAL_MS),
      },
      {
        goal: `/v1/health p99 while two clients export a ${r.bagMiB} MiB bag as NDJSON with decode`,
        target: `≤ ${GOAL_MS} ms`,
        measured: `${sig(p99(r.pool.exportTwo))} ms (event-loop baseline ${sig(p99(r.baseline.exportTwo))} ms)`,
        met: p99(r.pool.exportTwo) <= GOAL_MS,
      },
      {
        goal: 'concurrent readers grow with cores (two exports together vs one)',
        target: `≥ ${SCALING_GOAL}× on ${r.cores} cores`,
        measured: `${times(ratio)} (event-loop baseline ${times(r.baseline.exportTwo.aggregateMBPerS / r.baseline.exportOne.aggregateMBPerS)})`,
        met: r.cores < 2 ? null : ratio >= SCALING_GOAL,
      },
    ],
  };
}
