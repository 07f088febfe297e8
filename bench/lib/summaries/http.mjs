// bench/results/http-<runtime>.json (bench/http.bench.mjs) → tables and goals. The bench reports MiB/s; the goals
// are in MB/s (10^6 bytes), as in the Python bench, so the tables convert.
import { mibToMB, num, sig, times } from '../format.mjs';

export function summarize(r) {
  const s = r.smallFrames;
  const b = r.bigFrames;
  const mb = (x) => mibToMB(x?.median);
  const raw = mb(b.rawLoopbackSocketMiBPerS);
  const small = {
    section: 'http',
    title: `HTTP, ${num(s.frames)} × 64 B frames from .vdb (median of ${r.reps}; server in a child process of the same runtime)`,
    columns: ['NDJSON msg/s', 'JSON pages msg/s', 'binary stream MB/s'],
    rows: [[num(s.ndjsonMsgPerS.median), num(s.jsonPagesMsgPerS.median), sig(mibToMB(s.binaryMiBPerS.median))]],
  };
  const streams = [
    ['binary stream .vdb', b.binaryStreamVdbMiBPerS],
    ['binary stream .vcap', b.binaryStreamVcapMiBPerS],
    ['WebSocket replay rate 0 .vdb', b.wsReplayRate0VdbMiBPerS],
    ['WebSocket replay rate 0 .vcap', b.wsReplayRate0VcapMiBPerS],
  ];
  const big = {
    section: 'http',
    title: `HTTP, ${b.frames} × 1 MiB frames, MB/s (median of ${r.reps}); baseline: a loopback raw socket copying the same bytes`,
    columns: ['transfer', 'ours MB/s', 'raw socket MB/s', 'ours / raw socket'],
    rows: streams.map(([name, v]) => [name, sig(mb(v)), sig(raw), times(mb(v) / raw)]),
  };
  const k = r.soak;
  const stall = r.stalledClient;
  const soak = {
    section: 'http',
    title: `${k.clients} concurrent paced WebSocket replay clients for ${k.seconds} s (server RSS and heap after GC, MiB), and a client that stops reading a rate-0 replay`,
    columns: [
      'msg/client/s (expected)',
      'dropped',
      'RSS 2nd quarter',
      'RSS last quarter',
      'heap 2nd quarter',
      'heap last quarter',
      'healthy',
      'no leak',
      'stalled client: server RSS growth MiB (recording MiB)',
    ],
    rows: [
      [
        `${sig(k.messagesPerClientPerS)} (${k.expectedPerClientPerS})`,
        k.totalDropped,
        sig(k.rssMiB.secondQuarter),
        sig(k.rssMiB.lastQuarter),
        sig(k.heapAfterGcMiB.secondQuarter),
        sig(k.heapAfterGcMiB.lastQuarter),
        k.serverStillHealthy ? 'yes' : 'NO',
        k.noLeak ? 'yes' : 'NO',
        `${sig(stall?.serverRssGrowthMiB)} (${stall?.recordingMiB})${stall && !stall.bounded ? ' UNBOUNDED' : ''}`,
      ],
    ],
  };
  const c = r.readerCache;
  const cache = c && {
    section: 'http',
    title: 'reader cache (default LRU) vs a reader per request: requests/s, 8 keep-alive clients',
    columns: ['request', 'cached', 'reader per request', 'cached / per request'],
    rows: Object.entries(c)
      .filter(([, v]) => typeof v === 'object')
      .map(([name, v]) => [name, num(v.cached), num(v.perRequest), times(v.cached / v.perRequest)]),
  };
  const pair = (a, b2) => `.vdb ${sig(mb(a))}, .vcap ${sig(mb(b2))} MB/s`;
  return {
    tables: [small, big, soak, cache].filter(Boolean),
    goals: [
      {
        goal: 'HTTP NDJSON, 64 B frames',
        target: '≥ 100,000 msg/s',
        measured: `${num(s.ndjsonMsgPerS.median)} msg/s`,
        met: s.ndjsonMsgPerS.median >= 100_000,
      },
      {
        goal: 'HTTP binary stream, 1 MiB frames',
        target: '≥ 300 MB/s',
        measured: pair(b.binaryStreamVdbMiBPerS, b.binaryStreamVcapMiBPerS),
        met: Math.min(mb(b.binaryStreamVdbMiBPerS), mb(b.binaryStreamVcapMiBPerS)) >= 300,
      },
      {
        goal: 'WebSocket replay at rate 0, 1 MiB frames',
        target: '≥ 300 MB/s',
        measured: pair(b.wsReplayRate0VdbMiBPerS, b.wsReplayRate0VcapMiBPerS),
        met: Math.min(mb(b.wsReplayRate0VdbMiBPerS), mb(b.wsReplayRate0VcapMiBPerS)) >= 300,
      },
      {
        goal: `${k.clients} concurrent replay clients, no leak`,
        target: 'RSS growth < 32 MiB, heap growth < 16 MiB, healthy',
        measured: `RSS ${sig(k.rssMiB.secondQuarter)} → ${sig(k.rssMiB.lastQuarter)} MiB, heap ${sig(k.heapAfterGcMiB.secondQuarter)} → ${sig(k.heapAfterGcMiB.lastQuarter)} MiB over ${k.seconds} s`,
        met: k.clients >= 100 && k.noLeak,
      },
    ],
  };
}
