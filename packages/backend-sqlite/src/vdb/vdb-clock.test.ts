import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import type { WriterConfig } from '@vlink/bag-core';
import { loadDriver } from '../driver/driver.js';
import { pattern, spyDriver, tempDir, rawFrame as frame } from '../testing/util.js';
import { type OpenWriterOptions, openWriter } from './open-writer.test.helper.js';
import * as SQL from './sql.js';
import { writeFrame } from '@vlink/bag-core/testing';

// How often the .vdb writer reads the clock (split from vdb-details.test.ts).

// What each refusal of the .vdb writer and reader says (code, message, file, url), the edges of the writer's
// bookkeeping (first timestamps of 0, limits reached exactly, counters of evicted rows) and the adaptive clock
// stride. Mutation testing (group vdb) found these unpinned.
const driver = await loadDriver();
const tmp = tempDir('vdb-clock');
after(() => tmp.cleanup());

/** A writer on a new file (`d`: another driver). */
const open = (config: Partial<WriterConfig> = {}, options: OpenWriterOptions & { d?: typeof driver } = {}) =>
  openWriter(options.d ?? driver, tmp, config, options);

describe('.vdb writer: the clock is read about once a millisecond', () => {
  /** Writes `n` frames `step` ms apart on an injected clock; returns how often the writer read it. */
  function reads(steps: Array<[number, number]>): number[] {
    let clock = 0;
    let count = 0;
    const { writer } = open(
      {},
      {
        now: () => {
          count++;
          return clock;
        },
      },
    );
    const out: number[] = [];
    let ts = 0;
    for (const [n, step] of steps) {
      const before = count;
      for (let i = 0; i < n; i++) {
        writeFrame(writer, frame(ts++, 'dds://a', pattern(4)));
        clock += step;
      }
      out.push(count - before);
    }
    writer.close();
    return out;
  }

  test('fast writes widen the stride up to 256 frames; slow ones narrow it to 2 (1 ms a frame)', () => {
    // 0.001 ms a frame: the stride doubles while reads are < 0.5 ms apart, up to its cap of 256.
    const [fast, slow, fastAgain] = reads([
      [100_000, 0.001],
      [1000, 1],
      [100_000, 0.001],
    ]);
    // The transaction's BEGIN reads it once; 1 + 2 + … + 256 = 511 frames (9 reads) reach the cap, then one read
    // per 256 frames.
    assert.equal(fast, 1 + 9 + Math.floor((100_000 - 511) / 256));
    // 1 ms a frame: from 256 the stride halves at each read (reads are then more than 2 ms apart): reads at frames
    // 94, 222 (+128), 286 (+64), … 350 (+2), then every 2 frames: 8 + (1000 - 350) / 2 = 333.
    assert.equal(slow, 333);
    // Back to 0.001 ms: the stride widens again as it did at the start (without the BEGIN's read).
    assert.equal(fastAgain, fast - 1);
  });

  test('very slow writes (3 ms a frame) narrow the stride to 1 and no further: fast ones widen it again', () => {
    const [slow, fast] = reads([
      [1000, 3],
      [100_000, 0.001],
    ]);
    // One read per frame, but for frame 2: the first read (right after the BEGIN's, no time between) widened the
    // stride to 2, the next (6 ms later) narrowed it back to 1.
    assert.equal(slow, 1000);
    // The first fast read still sees the 3 ms gap (the stride stays 1); the reads at frames 2, 4, …, 256 double it
    // to its cap of 256, then one read per 256 frames. A stride stuck at 0 would read 100 000 times.
    assert.equal(fast, 1 + 8 + Math.floor((100_000 - 256) / 256));
  });

  test('the metadata refresh waits until more than 1000 ms have passed', () => {
    let clock = 0;
    let refreshes = 0;
    const { driver: spy } = spyDriver(driver, (sql) => {
      if (sql === SQL.UPDATE_HEADER_COUNT) refreshes++;
      return false;
    });
    const { writer } = open({}, { d: spy, now: () => clock });
    writeFrame(writer, frame(0, 'dds://a', pattern(4)));
    clock = 1000;
    for (let i = 1; i < 600; i++) writeFrame(writer, frame(i, 'dds://a', pattern(4)));
    assert.equal(refreshes, 0, 'exactly 1000 ms: not yet');
    clock = 1000.5;
    for (let i = 600; i < 1200; i++) writeFrame(writer, frame(i, 'dds://a', pattern(4)));
    assert.equal(refreshes, 1);
    writer.close();
  });

  test('the metadata refresh comes a few ms after the second is up at a steady rate, fast or slow', () => {
    let clock = 0;
    let refreshes = 0;
    const { driver: spy } = spyDriver(driver, (sql) => {
      if (sql === SQL.UPDATE_HEADER_COUNT) refreshes++;
      return false;
    });
    const { writer } = open({}, { d: spy, now: () => clock });
    const refreshedAt: number[] = [];
    for (let i = 0; i < 200_000 && refreshedAt.length < 3; i++) {
      writeFrame(writer, frame(i, 'dds://a', pattern(4)));
      clock += clock < 1500 ? 0.01 : 0.9;
      if (refreshes > refreshedAt.length) refreshedAt.push(clock);
    }
    writer.close();
    assert.equal(refreshedAt.length, 3);
    for (const [k, at] of refreshedAt.entries())
      assert.ok(at > 1000 * (k + 1) && at <= 1000 * (k + 1) + 4, `refresh ${k} at ${at}`);
  });
});
