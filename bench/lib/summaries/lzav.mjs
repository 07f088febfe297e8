// bench/results/lzav.json (bench/lzav.bench.mjs, one entry per runtime) → tables and goals. There is no C throughput
// in the same run (the C reference is the fixture's compressed output), so the baseline is the compressed size.
import { num, sig } from '../format.mjs';

export function summarize(r) {
  const table = {
    section: 'lzav',
    title:
      'LZAV codec: MB/s (10^6 bytes, best of rounds) and compressed size vs the C reference output of the same vector',
    columns: [
      'vector',
      'bytes',
      'compress',
      'compress hi',
      'decompress',
      'frame round trip',
      'size / C ref',
      'hi size / C ref',
      'byte-identical',
    ],
    rows: r.rows.map((x) => [
      x.vector,
      num(x.bytes),
      sig(x.compressMBs),
      sig(x.compressHiMBs),
      sig(x.decompressMBs),
      sig(x.frameRoundTripMBs),
      x.refSize === null
        ? `${num(x.size)} (no ref)`
        : `${num(x.size)} / ${num(x.refSize)} (${(x.size / x.refSize).toFixed(3)})`,
      x.refSizeHi === null
        ? `${num(x.sizeHi)} (no ref)`
        : `${num(x.sizeHi)} / ${num(x.refSizeHi)} (${(x.sizeHi / x.refSizeHi).toFixed(3)})`,
      x.identical === null ? '–' : x.identical ? 'yes' : 'NO',
    ]),
  };
  const withRef = r.rows.filter((x) => x.refSize !== null);
  const big = r.rows.filter((x) => x.bytes >= 1 << 20);
  return {
    tables: [table],
    goals: [
      {
        goal: 'LZAV compressed size vs the C reference (all vectors, default and hi)',
        target: 'same size (ratio 1.000)',
        measured: `${withRef.filter((x) => x.size === x.refSize && x.sizeHi === x.refSizeHi).length} of ${withRef.length} vectors equal, ${withRef.filter((x) => x.identical).length} byte-identical`,
        met: withRef.length > 0 && withRef.every((x) => x.size === x.refSize && x.sizeHi === x.refSizeHi),
      },
      {
        goal: 'LZAV MB/s on 1 MiB inputs (compress / decompress)',
        target: 'reported (no numeric goal)',
        measured: big.map((x) => `${x.vector}: ${sig(x.compressMBs)} / ${sig(x.decompressMBs)}`).join('; '),
        met: null,
      },
    ],
  };
}
