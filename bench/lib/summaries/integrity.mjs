// bench/results/integrity-<runtime>.json (bench/integrity.bench.mjs) → tables and goals (issue 20).
import { sig, times } from '../format.mjs';

const size = (b) => (b >= 1024 * 1024 ? `${b / (1024 * 1024)} MiB` : b >= 1024 ? `${b / 1024} KiB` : `${b} B`);

/** ` (run <date>)` for a section run apart from the others (`--only`): results may then come from different days. */
function ranOn(r, section) {
  const dates = r.dates ?? {};
  const distinct = new Set(Object.values(dates));
  return distinct.size > 1 && dates[section] ? ` (run ${dates[section]})` : '';
}

export function summarize(r) {
  const a = r.awaitWrite;
  // Results from before the benchmark summed every thread's CPU have per-thread figures only.
  const allThreads = a.cpuMs?.awaitWriteAllThreads !== undefined;
  const tables = [
    {
      section: 'writer',
      title: `\`await writer.write()\` loop vs syncMode push loop, ${a.frames.toLocaleString('en-US')} × 64 B .vcap frames (${r.contenders.awaitWrite}; baseline: ${r.contenders.sync})${ranOn(r, 'awaitWrite')}`,
      columns: [
        'await write() frames/s',
        'syncMode frames/s',
        'ratio (median of paired repetitions)',
        'drops (await write)',
      ],
      rows: [[sig(a.awaitWriteFramesPerS), sig(a.syncFramesPerS), times(a.ratio), String(a.awaitWriteDrops)]],
    },
    ...(a.cpuMs?.producer === undefined
      ? []
      : [
          {
            section: 'writer',
            title:
              'CPU per thread in the same runs (medians, ms): on a machine shared with other jobs the kernel shares CPU between sessions, not threads, so the wall-clock ratio above measures the two threads together; without contention it is about syncMode CPU / the busier thread',
            columns: [
              'await write(): producer thread',
              'await write(): writer worker',
              'syncMode thread',
              ...(allThreads
                ? [
                    `await write(): all threads (runtime helpers too; on ${r.machine.cores} cores the loop cannot take less wall time than this / ${r.machine.cores})`,
                    'syncMode: all threads',
                  ]
                : []),
            ],
            rows: [
              [
                sig(a.cpuMs.producer),
                sig(a.cpuMs.worker),
                sig(a.cpuMs.sync),
                ...(allThreads ? [sig(a.cpuMs.awaitWriteAllThreads), sig(a.cpuMs.syncAllThreads)] : []),
              ],
            ],
          },
        ]),
    ...(a.syncBesideBusyCore === undefined
      ? []
      : [
          {
            section: 'writer',
            title:
              "syncMode throughput while another core is busy, relative to alone (median of 5 paired runs; bench/lib/busy-core.mjs): `await write()` uses two cores, so this says whether its two threads slow each other on this machine (1×: not at all, and the ratio above is then set by each thread's own CPU per frame; below 1×: by that much)",
            columns: [
              'beside a core-time-only load (alu)',
              'beside a memory-streaming load (64 MiB, cache-line stride)',
            ],
            rows: [[times(a.syncBesideBusyCore.alu), times(a.syncBesideBusyCore.memory)]],
          },
        ]),
    ...(a.workerCodeAlone === undefined
      ? []
      : [
          {
            section: 'writer',
            title:
              "the writer worker's own code on one thread (bench/lib/worker-code.mjs: the worker's `serveWriter` fed the same frames in batches built beforehand, from open to closed) against the syncMode loop, medians of 9 interleaved pairs: where the worker sets the pace, syncMode / worker code bounds the `await write()` ratio above, however well its two threads overlap",
            columns: [
              'worker code, ms per run',
              "its thread's CPU, ms (compare: the writer worker's CPU above)",
              'syncMode, ms per run',
              'syncMode / worker code (median of pairs)',
            ],
            rows: [
              [
                sig(a.workerCodeAlone.workerCodeMs),
                a.workerCodeAlone.workerCodeCpuMs === undefined ? '–' : sig(a.workerCodeAlone.workerCodeCpuMs),
                sig(a.workerCodeAlone.syncMs),
                times(a.workerCodeAlone.ceiling),
              ],
            ],
          },
        ]),
    {
      section: 'writer',
      title: `frames dropped by plain push() in bursts fed at a fraction of the writer's sustained rate (${r.contenders.burst})${ranOn(r, 'burst')}`,
      columns: ['payload', 'burst frames', 'fed at', 'frames/s', 'dropped', 'written'],
      rows: r.burst.map((b) => [
        size(b.size),
        b.frames.toLocaleString('en-US'),
        `${b.fraction * 100} %`,
        sig(b.ratePerS),
        String(b.dropped),
        String(b.written),
      ]),
    },
    {
      section: 'read',
      title: `check (${r.contenders.check}) vs reading every payload (${r.contenders.read}), page cache warm${ranOn(r, 'check')}`,
      columns: ['format', 'bag', 'compression', 'read ms', 'check ms', 'check speed / read speed'],
      rows: r.check.map((c) => [
        `.${c.format}`,
        `${c.bagMiB} MiB`,
        c.compression,
        sig(c.readMs),
        sig(c.checkMs),
        times(c.ratio),
      ]),
    },
  ];
  const below = r.burst.filter((b) => b.fraction < 1);
  const full = !r.quick && a.frames >= 1_000_000;
  return {
    tables,
    goals: [
      {
        goal: '`await writer.write()` loop of 1,000,000 × 64 B: 0 drops, vs syncMode throughput',
        target: '0 drops, ≥ 90 %',
        measured: `${times(a.ratio)}, ${a.awaitWriteDrops} drops (${a.frames.toLocaleString('en-US')} frames)`,
        met: full ? a.awaitWriteDrops === 0 && a.ratio >= 0.9 : undefined,
      },
      {
        goal: 'push() bursts below the sustained rate (50 %, 90 %): no drops',
        target: '0 dropped',
        measured: below.map((b) => `${size(b.size)}×${b.frames} @${b.fraction * 100}%: ${b.dropped}`).join(', '),
        met: below.length > 0 ? below.every((b) => b.dropped === 0) : undefined,
      },
      {
        goal: 'check (full: CRCs, payload decode) vs reading every payload',
        target: '≥ 50 % of the read speed (2 GiB bag)',
        measured: r.check.map((c) => `.${c.format} ${c.bagMiB} MiB ${times(c.ratio)}`).join(', '),
        met: r.check.every((c) => c.bagMiB >= 2048) ? r.check.every((c) => c.ratio >= 0.5) : undefined,
      },
    ],
  };
}
