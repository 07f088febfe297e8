// bench/results/vdb-<runtime>.json (bench/vdb.bench.mjs) → tables and goals.
import { num, sizeLabel, times } from '../format.mjs';

export function summarize(r) {
  const rows = r.results;
  const hasBag = rows.some((x) => x.framesPerSec.bagWrite !== undefined);
  const write = {
    section: 'vdb-write',
    title: `.vdb write, frames/s (median of ${r.reps} reps; ratio = raw driver time / our time; CPU ratio from process CPU time)`,
    columns: [
      'driver',
      'payload',
      'LZAV',
      'frames',
      'BagWriter',
      'Backend writer',
      'raw INSERT loop',
      'BagWriter / raw',
      'Backend / raw',
      'Backend / raw (CPU)',
    ],
    rows: rows.map((x) => [
      r.driver,
      sizeLabel(x.payload),
      x.lzav ? 'on' : 'off',
      num(x.frames),
      num(x.framesPerSec.bagWrite),
      num(x.framesPerSec.ourWrite),
      num(x.framesPerSec.rawWrite),
      times(x.ratio.bagWriterVsRaw),
      times(x.ratio.write),
      times(x.cpuRatio?.write),
    ]),
  };
  const read = {
    section: 'read',
    title: `.vdb read, frames/s: Backend reader frames() vs the raw driver's SELECT … ORDER BY elapsed iterate (median of ${r.reps} reps)`,
    columns: ['driver', 'payload', 'LZAV', 'ours', 'raw SELECT iterate', 'ours / raw', 'ours / raw (CPU)'],
    rows: rows.map((x) => [
      r.driver,
      sizeLabel(x.payload),
      x.lzav ? 'on' : 'off',
      num(x.framesPerSec.ourRead),
      num(x.framesPerSec.rawRead),
      times(x.ratio.read),
      times(x.cpuRatio?.read),
    ]),
  };
  const goals = [];
  for (const op of ['write', 'read']) {
    for (const lzav of [false, true]) {
      const cases = rows.filter((x) => x.lzav === lzav);
      // Writes: the "ours" is BagWriter; the Backend writer's ratio is shown beside it.
      const value = (x) => (op === 'write' && hasBag ? x.ratio.bagWriterVsRaw : x.ratio[op]);
      const measured = cases.map((x) => `${sizeLabel(x.payload)} ${times(value(x))}`).join(', ');
      goals.push({
        goal: `.vdb ${op} vs raw driver loop, LZAV ${lzav ? 'on' : 'off'} (${op === 'write' ? (hasBag ? 'BagWriter' : 'Backend writer') : 'Backend reader'})`,
        target: '≥ 90 % at 64 B, 4 KiB, 1 MiB',
        measured,
        met: cases.length > 0 && cases.every((x) => value(x) >= 0.9),
      });
    }
  }
  return { tables: [write, read], goals };
}
