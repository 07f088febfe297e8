// bench/results/lake-query-<runtime>.json (bench/lake-query.bench.mjs) → tables and goals (issue 24).
import { sig, times } from '../format.mjs';

export function summarize(r) {
  const f = r.fleet;
  const tables = [
    {
      section: 'lake-query',
      title: `${f.bags} bags × ${f.messagesPerBag.toLocaleString('en-US')} messages (${f.messages.toLocaleString('en-US')}): ${r.question} (baseline: ${r.contenders.loop})`,
      columns: ['contender', 'what it reads', 'ms', 'messages/s', 'ratio to the loop'],
      rows: [
        ...r.cases.map((c) => [
          c.name,
          r.contenders[c.name],
          sig(c.ms),
          c.messagesPerS === undefined ? '—' : sig(c.messagesPerS),
          times(c.ratioToLoop),
        ]),
        ['loop', r.contenders.loop, sig(r.loop.ms), sig(r.loop.messagesPerS), '1.00×'],
      ],
    },
  ];
  const byName = Object.fromEntries(r.cases.map((c) => [c.name, c]));
  return {
    tables,
    goals: [
      {
        goal: 'a DuckDB aggregate over 100 bags × 100k messages, and the same through the catalog',
        target: 'reported (no target in the issue)',
        measured: `export ${sig(byName.export.ms)} ms (${times(byName.export.ratioToLoop)} the BagReader loop), catalog ${sig(byName.catalog.ms)} ms (${times(byName.catalog.ratioToLoop)})`,
        met: undefined,
      },
    ],
  };
}
