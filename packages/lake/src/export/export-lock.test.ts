import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from '@vlink/fixtures/test';
import { BagError } from '@vlink/bag-core';
import { exportedRows, exportFrames, writeExportBag } from '../testing/export-bags.js';
import { ExportLock, LOCK_FILE } from './export-lock.js';
import { exportMessages } from './export-messages.js';
import { BagExportState } from './export-state.js';

/** One export at a time per folder: a second one is refused at once, naming the first; a dead one's lock is taken over. */
const SLOW = { timeout: 120_000 };
const dir = mkdtempSync(join(tmpdir(), 'lake-export-lock-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const FRAMES = exportFrames(48);
const bag = join(dir, 'run.vcap');
/** Above Linux's largest pid (2^22) and macOS's: no process has it. */
const DEAD_PID = 2 ** 30;

const lockOf = (out: string) => join(out, '_export', LOCK_FILE);
const writeLock = (out: string, holder: object) => {
  mkdirSync(join(out, '_export'), { recursive: true });
  writeFileSync(lockOf(out), JSON.stringify(holder));
};

describe('exportMessages: the output folder lock', () => {
  before(() => writeExportBag(bag, FRAMES));

  test(
    'a second export into the folder fails at once with BUSY, naming the first; the first is whole',
    SLOW,
    async () => {
      const out = join(dir, 'both');
      let second: Promise<unknown> | undefined;
      const first = exportMessages([bag], out, {
        rowGroupRows: 4,
        // While the first one writes its parts, the second starts.
        onFile: () => {
          second ??= exportMessages([bag], out).then(
            () => assert.fail('the second export ran'),
            (error: unknown) => error,
          );
        },
      });
      const report = await first;
      const error = await second;
      assert.ok(error instanceof BagError, String(error));
      assert.equal(error.code, 'BUSY');
      assert.match(error.message, new RegExp(`pid ${process.pid} on ${hostname()}`));
      assert.equal(report.messages, FRAMES.length);
      assert.equal((await exportedRows(out)).length, FRAMES.length, 'no row twice');
      assert.ok(!existsSync(lockOf(out)), 'released');
      assert.equal(report.staleLock, null);
    },
  );

  test(
    'the lock of an export whose process is gone is taken over, and the report says whose it was',
    SLOW,
    async () => {
      const out = join(dir, 'stale');
      const holder = { pid: DEAD_PID, host: hostname(), started: '2026-01-02T03:04:05.000Z' };
      writeLock(out, holder);
      const report = await exportMessages([bag], out);
      assert.deepEqual(report.staleLock, holder);
      assert.equal(report.messages, FRAMES.length);
      assert.ok(!existsSync(lockOf(out)));
    },
  );

  test('a lock of another host, or unreadable, holds: BUSY, the lock left as it was', async () => {
    const out = join(dir, 'other-host');
    const holder = { pid: DEAD_PID, host: `not-${hostname()}`, started: '2026-01-02T03:04:05.000Z' };
    writeLock(out, holder);
    await assert.rejects(exportMessages([bag], out), (error: unknown) => {
      assert.ok(error instanceof BagError && error.code === 'BUSY');
      assert.match(error.message, new RegExp(`pid ${DEAD_PID} on not-`));
      return true;
    });
    assert.deepEqual(JSON.parse(readFileSync(lockOf(out), 'utf8')), holder);
    writeFileSync(lockOf(out), '');
    await assert.rejects(exportMessages([bag], out), { code: 'BUSY' });
    assert.ok(!existsSync(join(out, 'messages')), 'nothing written');
  });

  test('released after a failure too; held while the lock object lives', async () => {
    const out = join(dir, 'failing');
    await assert.rejects(exportMessages([join(dir, 'missing.vcap')], out));
    assert.ok(!existsSync(lockOf(out)));
    const lock = ExportLock.acquire(out);
    assert.throws(() => ExportLock.acquire(out), { code: 'BUSY' });
    lock.release();
    ExportLock.acquire(out).release();
    assert.deepEqual(readdirSync(join(out, '_export')), []);
  });

  test('temporary part names are unique per run, and the journal lists them relative to the folder', () => {
    const out = join(dir, 'temporary');
    const part = join(out, 'messages', 'url=a', 'date=2026-03-14', 'part-x-0.parquet');
    const a = new BagExportState(out, 'x', 'run1').willWrite(part);
    const b = new BagExportState(out, 'x', 'run2').willWrite(part);
    assert.notEqual(a, b);
    assert.equal(
      readFileSync(join(out, '_export', 'x.journal'), 'utf8'),
      'messages/url=a/date=2026-03-14/part-x-0.parquet\tmessages/url=a/date=2026-03-14/.part-x-0.parquet.run1.tmp\n' +
        'messages/url=a/date=2026-03-14/part-x-0.parquet\tmessages/url=a/date=2026-03-14/.part-x-0.parquet.run2.tmp\n',
    );
  });
});
