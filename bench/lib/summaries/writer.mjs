// bench/results/writer-<runtime>.json (bench/writer.bench.mjs) → tables and goals.
import { sig, sizeLabel, times } from '../format.mjs';

const MiB = 1024 * 1024;

export function summarize(r) {
  const cell = (size, mode) => r.pushCost.find((x) => x.size === size && x.mode === mode);
  const sizes = [...new Set(r.pushCost.map((x) => x.size))];
  const push = {
    section: 'writer',
    title:
      'producer push() cost, µs per call at a sustainable rate (≤ 200 MB/s or 200k frames/s); baselines: syncMode, and the floor (a url lookup and an Array.push of the buffer, timed the same way: what any call costs here when cold)',
    columns: [
      'frame',
      'worker p50',
      'worker p99',
      'worker p99.9',
      'worker+transfer p50',
      'worker+transfer p99',
      'sync p50',
      'sync p99',
      'floor p50',
      'floor p99',
    ],
    rows: sizes.map((s) => [
      sizeLabel(s),
      sig(cell(s, 'worker')?.p50),
      sig(cell(s, 'worker')?.p99),
      sig(cell(s, 'worker')?.['p99.9']),
      sig(cell(s, 'worker+transfer')?.p50),
      sig(cell(s, 'worker+transfer')?.p99),
      sig(cell(s, 'sync')?.p50),
      sig(cell(s, 'sync')?.p99),
      sig(cell(s, 'floor')?.p50),
      sig(cell(s, 'floor')?.p99),
    ]),
  };
  // Older results hold the list of pushes alone.
  const warmPushes = Array.isArray(r.pushWarmth) ? r.pushWarmth : r.pushWarmth?.pushes;
  const warmth = warmPushes && {
    section: 'writer',
    title:
      'why large frames cost more per push: two transferred frames back to back per task, µs (first = cold, as a paced producer pays)',
    columns: ['frame', 'first p50', 'first p99', 'second p50', 'second p99'],
    rows: warmPushes.map((x) => [
      sizeLabel(x.size),
      sig(x.first.p50),
      sig(x.first.p99),
      sig(x.second.p50),
      sig(x.second.p99),
    ]),
  };
  const a = r.pushWarmth?.arming;
  const arming = a && {
    section: 'writer',
    title:
      'arming a callback as the first thing in a task, µs (the writer hands batches over by a promise reaction; setImmediate was the old way)',
    columns: ['nothing p50 / p99', 'setImmediate p50 / p99', 'promise reaction p50 / p99'],
    rows: [
      [
        `${sig(a.nothing.p50)} / ${sig(a.nothing.p99)}`,
        `${sig(a.setImmediate.p50)} / ${sig(a.setImmediate.p99)}`,
        `${sig(a.promiseReaction.p50)} / ${sig(a.promiseReaction.p99)}`,
      ],
    ],
  };
  const w = r.workerAlone;
  const alone = w && {
    section: 'writer',
    title:
      'the same syncMode loop (1 KiB frames) on the main thread and alone in a worker thread, MB/s (runs; diagnostic for the throughput table)',
    columns: ['main thread', 'worker thread', 'best worker / best main'],
    rows: [
      [
        w.runs.thisThread.map(sig).join(', '),
        w.runs.workerThread.map(sig).join(', '),
        times(w.workerThreadMBps / w.thisThreadMBps),
      ],
    ],
  };
  const loop = {
    section: 'writer',
    title: 'event-loop delay while recording 200 MB/s of 1 MiB frames with zstd (ms)',
    columns: ['mode', 'offered MB/s', 'written MB/s', 'delay p50', 'delay p99', 'delay max', 'refused pushes'],
    rows: r.loopDelay.map((x) => [
      x.mode,
      sig(x.offeredMBps),
      sig(x.writtenMBps),
      sig(x.loopDelayMs.p50),
      sig(x.loopDelayMs.p99),
      sig(x.loopDelayMs.max),
      x.refused,
    ]),
  };
  const throughput = {
    section: 'writer',
    title:
      'end-to-end throughput, push everything until close() resolves (MB/s, median of alternating runs; worker / sync: the median of the pairs’ ratios where the results have `workerVsSyncOfMedians`, else the ratio of the medians; older results: better of two)',
    columns: ['workload', 'syncMode', 'worker', 'worker / sync', 'syncMode runs', 'worker runs'],
    rows: r.throughput.map((x) => [
      x.workload,
      sig(x.sync.MBps),
      sig(x.worker.MBps),
      times(x.workerVsSync),
      (x.sync.runsMBps ?? []).map(sig).join(', ') || '–',
      (x.worker.runsMBps ?? []).map(sig).join(', ') || '–',
    ]),
  };
  const d = r.slowDisk;
  const memory = {
    section: 'memory',
    title: `peak RSS while recording 200 MB/s of 1 MiB frames to a ${d.diskMBps} MB/s disk (worker writer, maxMemorySize ${d.maxMemorySizeMiB} MiB)`,
    columns: [
      'offered MB/s',
      'maxMemorySize MiB',
      'baseline RSS MiB',
      'peak RSS MiB',
      'growth MiB',
      'limit (maxMemorySize + 64) MiB',
      'frames dropped / pushed',
    ],
    rows: [
      [
        sig(d.offeredMBps),
        d.maxMemorySizeMiB,
        sig(d.baselineRssMiB),
        sig(d.peakRssMiB),
        sig(d.growthMiB),
        d.maxMemorySizeMiB + 64,
        `${d.droppedQueueMemory + d.droppedQueueDepth} / ${d.pushed}`,
      ],
    ],
  };

  const worst = (sizesList, mode, key) => Math.max(...sizesList.map((s) => cell(s, mode)?.[key] ?? Number.NaN));
  const small = [64, 1024, 16 * 1024];
  const large = [64 * 1024, 256 * 1024, MiB];
  const list = (mode, key) => small.map((s) => `${sizeLabel(s)} ${sig(cell(s, mode)?.[key])}`).join(', ');
  const workerLoop = r.loopDelay.find((x) => x.mode === 'worker');
  const transfer = cell(MiB, 'worker+transfer');
  return {
    tables: [
      push,
      ...(warmth ? [warmth] : []),
      ...(arming ? [arming] : []),
      loop,
      throughput,
      ...(alone ? [alone] : []),
      memory,
    ],
    goals: [
      {
        goal: 'push() p50, worker, 64 B – 16 KiB',
        target: '≤ 2 µs',
        measured: `${list('worker', 'p50')} µs`,
        met: worst(small, 'worker', 'p50') <= 2,
      },
      {
        goal: 'push() p99, worker, 64 B – 16 KiB',
        target: '≤ 20 µs',
        measured: `${list('worker', 'p99')} µs`,
        met: worst(small, 'worker', 'p99') <= 20,
      },
      // Copying a 64 KiB – 1 MiB payload cannot take 2 µs (memcpy alone is 5–100 µs), so the large sizes are judged
      // with transferPayloads, where push() moves the buffer.
      {
        goal: 'push() p50, worker+transfer, 64 KiB – 1 MiB',
        target: '≤ 2 µs',
        measured: `${large.map((s) => `${sizeLabel(s)} ${sig(cell(s, 'worker+transfer')?.p50)}${cell(s, 'floor') ? ` (floor ${sig(cell(s, 'floor').p50)})` : ''}`).join(', ')} µs`,
        met: worst(large, 'worker+transfer', 'p50') <= 2,
      },
      {
        goal: 'push() p99, worker+transfer, 1 MiB',
        target: '≤ 20 µs',
        measured: `${sig(transfer?.p99)} µs`,
        met: transfer?.p99 <= 20,
      },
      {
        goal: 'event-loop delay p99 at 200 MB/s of 1 MiB zstd frames (worker)',
        target: '≤ 5 ms',
        measured: `${sig(workerLoop?.loopDelayMs.p99)} ms`,
        met: workerLoop?.loopDelayMs.p99 <= 5,
      },
      {
        goal: 'worker throughput vs syncMode',
        target: '≥ 90 %',
        measured: r.throughput.map((x) => `${x.workload}: ${times(x.workerVsSync)}`).join('; '),
        met: r.throughput.every((x) => x.workerVsSync >= 0.9),
      },
      {
        goal: 'RSS with a slow disk (growth while recording)',
        target: '≤ maxMemorySize + 64 MiB',
        measured: `${sig(d.growthMiB)} MiB (limit ${d.maxMemorySizeMiB + 64} MiB)`,
        met: d.growthMiB <= d.maxMemorySizeMiB + 64,
      },
    ],
  };
}
