import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { indexBags } from '../catalog/index-bags.js';
import { exportedRows, exportFrames, writeExportBag } from '../testing/export-bags.js';
import { exportMessages } from './export-messages.js';

/**
 * A bag is its location: two catalogs (two vehicles) may both hold a `run.vcap`, a bag may change after its export,
 * and a run may be resumed from another working directory. None of that may lose or duplicate a row.
 */
const SLOW = { timeout: 120_000 };
const dir = mkdtempSync(join(tmpdir(), 'lake-export-identity-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const CAR1 = exportFrames(24);
/** Other times than CAR1's: a row of one bag is never equal to a row of the other. */
const CAR2 = exportFrames(40).map((f) => ({
  ...f,
  frame: { ...f.frame, timestamp: f.frame.timestamp + 7_000_000, publishTime: f.frame.publishTime! + 7_000_000 },
}));

/** Rows, and how many rows repeat another row (bag_id, seq, url, log time). */
async function counts(out: string): Promise<{ rows: number; duplicates: number }> {
  const rows = await exportedRows(out, 'bag_id, seq, url, epoch_us(log_time) AS t');
  const keys = new Set(rows.map((r) => `${r['bag_id']}\u0000${r['seq']}\u0000${r['url']}\u0000${r['t']}`));
  return { rows: rows.length, duplicates: rows.length - keys.size };
}

describe('exportMessages: two bags with one bag_id', () => {
  const cat1 = join(dir, 'cat1');
  const cat2 = join(dir, 'cat2');
  before(async () => {
    await writeExportBag(join(dir, 'car1', 'run.vcap'), CAR1);
    await writeExportBag(join(dir, 'car2', 'run.vcap'), CAR2);
    await indexBags([join(dir, 'car1')], cat1);
    await indexBags([join(dir, 'car2')], cat2);
  });

  test('one call over both catalogs exports both (was: the second dropped)', SLOW, async () => {
    const out = join(dir, 'lake-one');
    const report = await exportMessages([cat1, cat2], out);
    assert.deepEqual(
      report.perBag.map((b) => [b.bagId, b.location, b.skipped, b.messages]),
      [
        ['run.vcap', join(dir, 'car1', 'run.vcap'), false, CAR1.length],
        ['run.vcap', join(dir, 'car2', 'run.vcap'), false, CAR2.length],
      ],
    );
    // Every row of both, once each: their part files have their own names.
    assert.deepEqual(await counts(out), { rows: CAR1.length + CAR2.length, duplicates: 0 });
  });

  test('one call per catalog into one lake: the second is not "already exported" (was: skipped)', SLOW, async () => {
    const out = join(dir, 'lake-two');
    await exportMessages([cat1], out);
    const second = await exportMessages([cat2], out);
    assert.equal(second.skipped, 0);
    assert.equal(second.messages, CAR2.length);
    assert.deepEqual(await counts(out), { rows: CAR1.length + CAR2.length, duplicates: 0 });
    const third = await exportMessages([cat1, cat2], out);
    assert.equal(third.skipped, 2);
  });

  test('the same bag listed twice (a catalog and its file) is exported once', SLOW, async () => {
    const out = join(dir, 'lake-same');
    const report = await exportMessages([cat1, join(dir, 'car1', '..', 'car1', 'run.vcap')], out);
    assert.equal(report.bags, 1);
    assert.deepEqual(await counts(out), { rows: CAR1.length, duplicates: 0 });
  });
});

describe('exportMessages: a bag that changed after its export', () => {
  test(
    'is exported again, its old parts deleted; an unchanged one is skipped (was: stale rows kept)',
    SLOW,
    async () => {
      const bags = join(dir, 'changing');
      const catalog = join(dir, 'cat-changing');
      const out = join(dir, 'lake-changing');
      const bag = join(bags, 'run.vcap');
      await writeExportBag(bag, CAR1);
      await indexBags([bags], catalog);
      const first = await exportMessages([catalog], out);
      assert.equal(first.messages, CAR1.length);
      // The recording is replaced by a longer one and indexed again (`updated`).
      await writeExportBag(bag, CAR2);
      assert.equal((await indexBags([bags], catalog)).updated, 1);
      const second = await exportMessages([catalog], out);
      assert.deepEqual(
        second.perBag.map((b) => [b.skipped, b.replaced, b.messages, b.discardedFiles]),
        [[false, true, CAR2.length, first.files]],
      );
      assert.deepEqual(await counts(out), { rows: CAR2.length, duplicates: 0 });
      const marker = JSON.parse(
        readFileSync(
          join(out, '_export', readdirSync(join(out, '_export')).find((f) => f.endsWith('.done.json'))!),
          'utf8',
        ),
      );
      assert.equal(marker.location, bag);
      assert.equal(typeof marker.size, 'number');
      assert.equal(typeof marker.modified_us, 'number');
      const third = await exportMessages([catalog], out);
      assert.deepEqual(
        third.perBag.map((b) => [b.skipped, b.replaced]),
        [[true, false]],
      );
      // Given by path, the file's own size and mtime are compared: changed again, exported again.
      const byPath = join(dir, 'lake-changing-path');
      await exportMessages([bag], byPath);
      await writeExportBag(bag, CAR1);
      const again = await exportMessages([bag], byPath);
      assert.deepEqual(
        again.perBag.map((b) => [b.skipped, b.replaced, b.messages]),
        [[false, true, CAR1.length]],
      );
      assert.deepEqual(await counts(byPath), { rows: CAR1.length, duplicates: 0 });
    },
  );
});

describe('exportMessages: resumed from another working directory', () => {
  test('the interrupted bag is redone without duplicates (was: its first parts kept twice)', SLOW, async () => {
    const bag = join(dir, 'resume', 'a.vcap');
    await writeExportBag(bag, CAR2);
    const work = join(dir, 'resume', 'work');
    mkdirSync(work, { recursive: true });
    const cwd = process.cwd();
    try {
      process.chdir(work);
      const controller = new AbortController();
      let files = 0;
      await assert.rejects(
        exportMessages([bag], 'lake', {
          rowGroupRows: 2,
          signal: controller.signal,
          onFile: () => {
            if (++files === 6) controller.abort();
          },
        }),
        (error: unknown) => error instanceof BagError && error.code === 'ABORTED',
      );
      // from the parent folder, the same export folder by another relative path
      process.chdir(join(dir, 'resume'));
      const resumed = await exportMessages([bag], join('work', 'lake'), { rowGroupRows: 2 });
      assert.ok(resumed.perBag[0]!.discardedFiles >= 6, `discarded ${resumed.perBag[0]!.discardedFiles}`);
    } finally {
      process.chdir(cwd);
    }
    const out = join(work, 'lake');
    assert.deepEqual(await counts(out), { rows: CAR2.length, duplicates: 0 });
    assert.ok(!existsSync(join(work, 'lake', '_export', 'lock.json')), 'the lock is released');
  });
});
