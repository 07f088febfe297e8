import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import type { BackendReader } from '../backend/backend.js';
import { BagError } from '../errors.js';
import type { Frame } from '../model/frame.js';
import type { Info, InfoMetadata } from '../model/info.js';
import type { MaintenanceProgress } from './check-report.js';
import { readThroughCheck } from './read-through-check.js';

/** A reader of `count` frames on /a and /b whose summary says `summary` and whose read fails at `failAt`. */
function reader(count: number, summary: number, failAt?: number): BackendReader & { reads: number } {
  const backend = {
    path: 'bag.x',
    reads: 0,
    info: () => ({ messageCount: summary }) as Info,
    schemas: () => [],
    close: () => {},
    *frames(): IterableIterator<Frame> {
      backend.reads++;
      for (let i = 0; i < count; i++) {
        if (i === failAt) throw new BagError('CORRUPT_FILE', 'chunk CRC mismatch', { file: 'bag.x', offset: 4096 });
        yield {
          timestamp: i * 10,
          url: i % 2 ? '/b' : '/a',
          serType: 'raw',
          schemaType: 0,
          actionType: 0,
          data: new Uint8Array(1),
        };
      }
    },
  };
  return backend;
}

describe('readThroughCheck: the check of formats without one of their own', () => {
  test('every frame read and counted against the summary', async () => {
    const progress: MaintenanceProgress[] = [];
    const report = await readThroughCheck(reader(20_000, 20_000), false, (p) => progress.push(p));
    assert.deepEqual(report, { ok: true, path: 'bag.x', quick: false, frames: 20_000, problems: [], moreProblems: 0 });
    assert.deepEqual(
      progress.map((p) => [p.done, p.total, p.unit]),
      [
        [8192, 20_000, 'frames'],
        [16_384, 20_000, 'frames'],
        [20_000, 20_000, 'frames'],
      ],
    );
  });

  test('a count that disagrees with the summary is a problem', async () => {
    const report = await readThroughCheck(reader(10, 12), false);
    assert.equal(report.ok, false);
    assert.equal(report.frames, 10);
    assert.deepEqual(report.problems, [
      { file: 'bag.x', message: "the file's summary counts 12 messages, but 10 were read" },
    ]);
  });

  test('a reading error is the problem, placed at the last frame that read and where the reader says', async () => {
    const report = await readThroughCheck(reader(10, 10, 7), false);
    assert.equal(report.ok, false);
    assert.equal(report.frames, 7);
    assert.deepEqual(report.problems, [
      {
        file: 'bag.x',
        message: 'reading stopped after 7 frames (the last of /a): chunk CRC mismatch',
        offset: 4096,
        url: '/a',
        timeUs: 60,
      },
    ]);
    const first = await readThroughCheck(reader(10, 10, 0), false);
    assert.deepEqual(first.problems, [
      { file: 'bag.x', message: 'reading stopped before the first frame: chunk CRC mismatch', offset: 4096 },
    ]);
  });

  test("a bag its reader says is not complete fails, in the reader's words, also when every frame reads", async () => {
    const unfinished = (metadata: Info['metadata']) => {
      const backend = reader(10, 10);
      backend.info = () => ({ messageCount: 10, hasCompleted: false, ...(metadata ? { metadata } : {}) }) as Info;
      return backend;
    };
    const notes: InfoMetadata[] = [
      { name: 'mcap.header', values: { profile: '' } },
      { name: 'mcap.problems', values: { '0': 'no footer', '1': 'scanned' } },
    ];
    for (const quick of [false, true]) {
      const report = await readThroughCheck(unfinished(notes), quick);
      assert.equal(report.ok, false);
      assert.equal(report.frames, 10);
      assert.deepEqual(report.problems, [{ file: 'bag.x', message: 'the bag is not complete: no footer; scanned' }]);
    }
    const bare = await readThroughCheck(unfinished(undefined), false);
    assert.deepEqual(bare.problems, [
      { file: 'bag.x', message: 'the bag is not complete: its reader found it unfinished or damaged' },
    ]);
  });

  test('quick: the summary only, nothing read', async () => {
    const backend = reader(10, 10, 3);
    const report = await readThroughCheck(backend, true);
    assert.deepEqual(report, { ok: true, path: 'bag.x', quick: true, frames: 10, problems: [], moreProblems: 0 });
    assert.equal(backend.reads, 0);
  });
});
