import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SlabPool, SpareSlabs } from './slab-pool.js';

describe('SlabPool', () => {
  test('a released slab is taken again, announced once', () => {
    const pool = new SlabPool(1 << 24);
    const first = pool.take(8192);
    assert.deepEqual(pool.takeAnnouncements(), [[first.id, first.buffer]]);
    pool.release(first.id);
    const again = pool.take(8192);
    assert.equal(again, first);
    assert.deepEqual(pool.takeAnnouncements(), []);
  });

  test('slabs beyond the idle limit are forgotten on release', () => {
    const pool = new SlabPool(8192);
    const a = pool.take(8192);
    const b = pool.take(8192);
    pool.release(a.id);
    pool.release(b.id);
    assert.deepEqual(pool.takeForgotten(), [b.id]);
  });

  test("a retired pool's slabs serve the next recording's pool under ids of its own", () => {
    const spare = new SpareSlabs(1 << 24, 10_000);
    const capacity = 16384;
    const old = new SlabPool(1 << 24, undefined, spare);
    const lent = old.take(capacity);
    const idle = old.take(capacity);
    old.release(idle.id);
    old.retire();
    assert.equal(spare.keptBytes, 2 * capacity, 'both slabs kept, the lent one too (the worker is done with it)');

    const next = new SlabPool(1 << 24, undefined, spare);
    next.take(4096); // a fresh slab first: ids count from 0 in each pool
    const reused = [next.take(capacity), next.take(capacity)];
    assert.deepEqual(new Set(reused.map((s) => s.buffer)), new Set([lent.buffer, idle.buffer]));
    assert.deepEqual(
      reused.map((s) => s.id),
      [1, 2],
    );
    // The new recording's worker has never seen them: they are announced like fresh slabs.
    assert.deepEqual(
      next.takeAnnouncements().slice(1),
      reused.map((s) => [s.id, s.buffer]),
    );
    assert.equal(spare.keptBytes, 0);
    assert.notEqual(next.take(capacity).buffer, lent.buffer, 'a third slab is new');
  });

  test('spare slabs are kept up to their limit, and dropped when no recording takes them in time', async () => {
    const spare = new SpareSlabs(3 * 4096, 30);
    const pool = new SlabPool(1 << 24, undefined, spare);
    for (let i = 0; i < 4; i++) pool.take(4096);
    pool.retire();
    assert.equal(spare.keptBytes, 3 * 4096, 'the fourth slab is over the limit');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(spare.keptBytes, 0);
    assert.equal(spare.take(4096), undefined);
  });
});
