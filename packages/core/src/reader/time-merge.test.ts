import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { BagError } from '../errors.js';
import { type MergeSource, TimeMerge } from './time-merge.js';

/** A source over a sorted list of [hi, lo] times; `opened`/`closed` record when the merge opened and closed it. */
class ListSource implements MergeSource {
  hi = 0;
  lo = 0;
  private k = -1;
  constructor(
    readonly rank: number,
    readonly times: Array<[number, number]>,
    readonly bytes = 100,
  ) {}
  step(): boolean {
    if (++this.k >= this.times.length) return false;
    [this.hi, this.lo] = this.times[this.k]!;
    return true;
  }
}

function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Sources with random, overlapping time ranges (ties included), sorted by their first time as an index lists them. */
function sources(count: number, seed: number): Array<Array<[number, number]>> {
  const random = lcg(seed);
  const lists: Array<Array<[number, number]>> = [];
  for (let s = 0; s < count; s++) {
    const start = Math.floor(random() * 50);
    const n = 1 + Math.floor(random() * 20);
    const list: Array<[number, number]> = [];
    let t = start;
    for (let i = 0; i < n; i++) {
      list.push([Math.floor(t / 8), t % 8]);
      t += Math.floor(random() * 4);
    }
    lists.push(list);
  }
  return lists.sort((a, b) => a[0]![0] - b[0]![0] || a[0]![1] - b[0]![1]);
}

function run(lists: Array<Array<[number, number]>>, limits?: { maxOpen: number; maxOpenBytes: number }) {
  const out: Array<[number, number, number]> = [];
  let open = 0;
  let most = 0;
  const merge = new TimeMerge<ListSource>(
    lists.length,
    (i) => lists[i]![0]![0],
    (i) => lists[i]![0]![1],
    (i) => {
      most = Math.max(most, ++open);
      return new ListSource(i, lists[i]!);
    },
    () => open--,
    'mem.bag',
    limits,
  );
  for (let s = merge.next(); s; s = merge.next()) out.push([s.hi, s.lo, s.rank]);
  return { out, most, open };
}

describe('TimeMerge', () => {
  test('every item once, in time order, ties by rank; every source closed', () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const lists = sources(60, seed);
      const { out, open } = run(lists);
      const want = lists
        .flatMap((list, rank) => list.map(([hi, lo]): [number, number, number] => [hi, lo, rank]))
        .sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
      assert.deepEqual(out, want, `seed ${seed}`);
      assert.equal(open, 0);
    }
  });

  test('sources that do not overlap are open one at a time', () => {
    const lists: Array<Array<[number, number]>> = [];
    for (let s = 0; s < 50; s++)
      lists.push([
        [s, 0],
        [s, 5],
        [s, 9],
      ]);
    const { out, most } = run(lists);
    assert.equal(out.length, 150);
    assert.equal(most, 1);
  });

  test('more sources or bytes open than the limits: LIMIT_REACHED, with the file', () => {
    // Every source starts at 0 and runs to the end: all of them overlap.
    const lists = Array.from(
      { length: 20 },
      (_, s): Array<[number, number]> => [
        [0, s],
        [99, s],
      ],
    );
    assert.equal(run(lists).out.length, 40);
    for (const limits of [
      { maxOpen: 5, maxOpenBytes: 1 << 30 },
      { maxOpen: 1000, maxOpenBytes: 50_000 },
    ]) {
      assert.throws(
        () => run(lists, limits),
        (error: unknown) => BagError.isInstance(error) && error.code === 'LIMIT_REACHED' && error.file === 'mem.bag',
      );
    }
  });

  test('an empty source (nothing to step to) is closed at once and never returned', () => {
    const lists: Array<Array<[number, number]>> = [[[1, 0]], [], [[0, 5]]];
    const merge = new TimeMerge<ListSource>(
      3,
      () => 0,
      () => 0,
      (i) => new ListSource(i, lists[i]!),
    );
    const got: number[] = [];
    for (let s = merge.next(); s; s = merge.next()) got.push(s.rank);
    assert.deepEqual(got, [2, 0]);
  });
});
