// bench/results/python-<runtime>.json (bench/python_read.py; <runtime> is the server's) → tables and goals.
import { num, sig, times } from '../format.mjs';

export function summarize(r) {
  const rows = [];
  for (const [label, section] of [
    ['64 B', r.smallFrames],
    ['1 MiB', r.bigFrames],
  ]) {
    const base = section.mcapPyLocalVcap;
    for (const [name, x] of [
      ['read_messages .vcap (over HTTP)', section.readMessagesVcap],
      ['read_messages .vdb (over HTTP)', section.readMessagesVdb],
      ['mcap reader, local .vcap file', base],
      ['httpx alone, same binary response', section.httpTransportOnlyVcap],
    ]) {
      rows.push([
        label,
        num(section.frames),
        name,
        x.msgPerS === undefined ? '–' : num(x.msgPerS),
        sig(x.MBPerS),
        name.startsWith('read_messages')
          ? times(x.medianSeconds ? base.medianSeconds / x.medianSeconds : undefined)
          : '–',
      ]);
    }
  }
  const table = {
    section: 'python',
    title: `Python client (${r.implementation} ${r.python}, vlink-bag ${r.packages?.['vlink-bag']}, mcap ${r.packages?.mcap}), median of ${r.reps}; MB = 10^6 bytes; ratio = mcap reader time / ours`,
    columns: ['payload', 'frames', 'reader', 'msg/s', 'MB/s', 'ours / mcap reader'],
    rows,
  };
  const small = r.smallFrames.readMessagesVcap;
  const big = r.bigFrames.readMessagesVcap;
  return {
    tables: [table],
    goals: [
      {
        goal: 'Python read_messages (.vcap over HTTP), 64 B frames',
        target: '≥ 100,000 msg/s',
        measured: `${num(small.msgPerS)} msg/s (mcap local ${num(r.smallFrames.mcapPyLocalVcap.msgPerS)})`,
        met: small.msgPerS >= 100_000,
      },
      {
        goal: 'Python read_messages (.vcap over HTTP), 1 MiB frames',
        target: '≥ 300 MB/s',
        measured: `${sig(big.MBPerS)} MB/s (mcap local ${sig(r.bigFrames.mcapPyLocalVcap.MBPerS)})`,
        met: big.MBPerS >= 300,
      },
    ],
  };
}
