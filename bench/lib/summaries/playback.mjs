// bench/results/playback-<runtime>.json (bench/playback.bench.mjs) → tables and goals.
import { num, sig, times } from '../format.mjs';

export function summarize(r) {
  const p = r.pacing;
  const t = r.throughput;
  const timing = {
    section: 'playback',
    title: `playback at rate 1 (${r.backend}; ${r.frames} frames over ${r.seconds} s: ${r.streams.map((s) => `${s.hz} Hz × ${s.size} B`).join(' + ')}); error = output callback time − ideal schedule, ms`,
    columns: ['error p50', 'error p99', 'error max', 'drift (last s − first s)', 'CPU % of a core', 'scheduling'],
    rows: [
      [
        sig(p.errorMs.p50),
        sig(p.errorMs.p99),
        sig(p.errorMs.max),
        sig(p.driftMs),
        sig(p.cpuPercent),
        r.scheduling?.policy ?? '–',
      ],
    ],
  };
  const speed = {
    section: 'playback',
    title: 'playback with forceDelay 0 vs a plain cursor loop over the same bag (frames/s, median of 5)',
    columns: ['passes', 'play forceDelay 0', 'cursor', 'play / cursor'],
    rows: [[t.passes, num(t.playbackFramesPerS), num(t.cursorFramesPerS), times(t.ratio)]],
  };
  const over = r.seconds < 30 ? ` (measured over ${r.seconds} s, not 30)` : '';
  return {
    tables: [timing, speed],
    goals: [
      {
        goal: 'playback error p99 at rate 1',
        target: '≤ 1 ms',
        measured: `${sig(p.errorMs.p99)} ms`,
        met: p.errorMs.p99 <= 1,
      },
      {
        goal: 'playback drift at rate 1 over 30 s',
        target: '≤ 2 ms',
        measured: `${sig(p.driftMs)} ms${over}`,
        met: Math.abs(p.driftMs) <= 2 && r.seconds >= 30 ? true : Math.abs(p.driftMs) <= 2 ? undefined : false,
      },
      {
        goal: 'playback forceDelay 0 vs cursor throughput',
        target: '≥ 80 %',
        measured: times(t.ratio),
        met: t.ratio >= 0.8,
      },
    ],
  };
}
