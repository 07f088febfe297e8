// bench/results/export-<runtime>.json (bench/export.bench.mjs) → tables and goals (issue 24).
import { sig, times } from '../format.mjs';

export function summarize(r) {
  const f = r.fleet;
  const tables = [
    {
      section: 'export',
      title: `${f.bags} recordings of ${f.seconds / 60} minutes (${f.messages.toLocaleString('en-US')} messages, ${f.payloadMiB} MiB of payload; /imu and /pose JSON, /scan and /image raw) exported to Parquet (ours: ${r.contenders.export}; baseline: ${r.contenders.binary}${r.contenders.floor ? `; ${r.contenders.floor}` : ''})`,
      columns: [
        'case',
        'messages/s',
        'payload MiB/s',
        'files',
        'Parquet MiB',
        '`cat --format binary` messages/s',
        'ratio',
        'reader floor messages/s',
        'ratio to the floor',
      ],
      // Results from before the floor row (the hand-written loop was then the baseline) have no floor columns.
      rows: r.cases.map((c) => [
        c.name,
        sig(c.messagesPerS),
        sig(c.payloadMiBPerS),
        String(c.files),
        String(c.outMiB),
        sig(r.binary.messagesPerS),
        times(c.ratioToBinary),
        r.floor ? sig(r.floor.messagesPerS) : '–',
        c.ratioToFloor === undefined ? '–' : times(c.ratioToFloor),
      ]),
    },
  ];
  const decoded = r.cases[0];
  return {
    tables,
    goals: [
      {
        goal: 'export throughput ≥ 50 % of `cat --format binary` on the same bags',
        target: '≥ 0.5×',
        measured: `${times(decoded.ratioToBinary)} (decoded), ${times(r.cases[1].ratioToBinary)} (payload only)`,
        met: decoded.ratioToBinary >= 0.5,
      },
    ],
  };
}
