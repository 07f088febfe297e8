// bench/results/vcap-<runtime>.json (bench/vcap.bench.mjs) → tables and goals.
import { num, sizeLabel, sig, times } from '../format.mjs';

const MiB = 1024 * 1024;

export function summarize(r) {
  const rows = r.results;
  const find = (size, compress) => rows.find((x) => x.size === size && x.compress === compress);
  const hasBag = rows.some((x) => x.write.bag);
  const write = {
    section: 'vcap-write',
    title: `.vcap write, MiB/s of payload (median of ${r.reps} reps; ratio = baseline time / our time)`,
    columns: [
      'payload',
      'compression',
      'frames',
      'BagWriter',
      'Backend writer',
      '@mcap/core McapWriter',
      'raw fs write+fsync',
      'BagWriter / McapWriter',
      'BagWriter / raw fs',
      'Backend / McapWriter',
      'Backend / raw fs',
    ],
    rows: rows.map((x) => [
      sizeLabel(x.size),
      x.compress,
      num(x.frames),
      sig(x.write.bag?.MBps),
      sig(x.write.ours.MBps),
      sig(x.write.mcapWriter.MBps),
      sig(x.write.rawFs.MBps),
      times(x.ratios.bagWriteVsMcapWriter),
      times(x.ratios.bagWriteVsRawFs),
      times(x.ratios.oursWriteVsMcapWriter),
      times(x.ratios.oursWriteVsRawFs),
    ]),
  };
  const read = {
    section: 'read',
    title: `.vcap read, MiB/s of payload: Backend reader frames() vs @mcap/core McapIndexedReader.readMessages() on the same file (median of ${r.reps} reps, page cache warm)`,
    columns: ['payload', 'compression', 'ours', 'McapIndexedReader', 'ours / McapIndexedReader'],
    rows: rows.map((x) => [
      sizeLabel(x.size),
      x.compress,
      sig(x.read.ours.MBps),
      sig(x.read.mcapIndexedReader.MBps),
      times(x.ratios.oursReadVsMcapIndexedReader),
    ]),
  };
  // The "ours" is BagWriter (the Backend writer plus the core's checks); goals use it when it was measured.
  const w = (size, key) => {
    const x = find(size, 'none');
    const bag = hasBag ? x.ratios[key.replace('ours', 'bag')] : undefined;
    const backend = x.ratios[key];
    return {
      value: bag ?? backend,
      measured: hasBag
        ? `${times(bag)} (Backend writer ${times(backend)})`
        : `${times(backend)} (Backend writer; BagWriter not measured)`,
    };
  };
  const goal = (text, target, { value, measured }, min) => ({ goal: text, target, measured, met: value >= min });
  const rd = (size) => {
    const value = find(size, 'none').ratios.oursReadVsMcapIndexedReader;
    return { value, measured: times(value) };
  };
  return {
    tables: [write, read],
    goals: [
      goal('.vcap write vs McapWriter, 1 MiB, no compression', '≥ 3×', w(MiB, 'oursWriteVsMcapWriter'), 3),
      goal('.vcap write vs raw fs write+fsync, 1 MiB, no compression', '≥ 50 %', w(MiB, 'oursWriteVsRawFs'), 0.5),
      goal('.vcap write vs McapWriter, 64 B, no compression', '≥ 2×', w(64, 'oursWriteVsMcapWriter'), 2),
      goal('.vcap read vs McapIndexedReader, 64 B, no compression', '≥ 2×', rd(64), 2),
      goal('.vcap read vs McapIndexedReader, 1 MiB, no compression', '≥ 1.5×', rd(MiB), 1.5),
    ],
  };
}
