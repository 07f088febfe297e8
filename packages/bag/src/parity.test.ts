import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import {
  ActionType,
  BagReader,
  BagWriter,
  type BagWriterOptions,
  type Frame,
  PlayStatus,
  SchemaType,
} from './index.js';

/** VLink's `is_running`, `wait_for_idle`, `get_split_index`, `is_split_mode` on BagWriter and BagReader. */
const dir = mkdtempSync(join(tmpdir(), 'vlink-parity-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;

const frame = (ms: number): Frame => ({
  timestamp: ms * 1000,
  url: '/a',
  data: new Uint8Array([ms & 0xff, 1, 2, 3]),
  serType: 'raw.A',
  schemaType: SchemaType.Raw,
  actionType: ActionType.Publish,
});

const MODES: Array<[string, BagWriterOptions]> = [
  ['worker', {}],
  ['queue', { worker: false }],
  ['sync', { syncMode: true }],
];

describe('BagWriter VLink parity', () => {
  for (const [mode, options] of MODES) {
    test(`${mode}: isRunning, waitForIdle, getSplitIndex, isSplitMode on a split recording`, async () => {
      const path = join(dir, `w${++n}.vdbx`);
      const writer = await BagWriter.create(path, { ...options, splitByTime: 100, startTimestamp: 1_000 });
      assert.equal(writer.isSplitMode(), true);
      assert.equal(writer.getSplitIndex(), 0);
      assert.equal(writer.isRunning(), mode === 'sync', 'sync mode records from the start');
      if (mode !== 'sync') writer.asyncRun();
      assert.equal(writer.isRunning(), true);
      // 0…350 ms in 10 ms steps: split boundaries at 100, 200, 300 ms → the last frame goes into segment 3.
      const times = Array.from({ length: 36 }, (_, i) => i * 10);
      for (const ms of times) assert.ok(writer.push(frame(ms)) >= 0);
      await writer.waitForIdle();
      assert.equal(writer.stats().writtenFrames, times.length, 'idle: every pushed frame is written');
      assert.equal(writer.stats().queuedFrames, 0);
      assert.equal(writer.getSplitIndex(), 3);
      await writer.close();
      assert.equal(writer.isRunning(), false);
      await writer.waitForIdle(); // resolves at once once closed
      const reader = await BagReader.create(path);
      try {
        assert.equal(reader.isSplitMode(), true);
        assert.equal(reader.getInfo().messageCount, times.length);
      } finally {
        reader.close();
      }
    });
  }

  for (const [mode, options] of MODES) {
    test(`${mode}: waitForIdle also settles frames the storage refused (a row limit)`, async () => {
      const path = join(dir, `l${++n}.vdb`);
      const writer = await BagWriter.create(path, { ...options, maxRowCount: 10 });
      for (let ms = 0; ms < 300; ms += 10) writer.push(frame(ms));
      await writer.waitForIdle();
      const stats = writer.stats();
      assert.equal(stats.writtenFrames + stats.dropped.limit, 30, JSON.stringify(stats.dropped));
      assert.ok(stats.dropped.limit > 0, 'the limit refused frames');
      await writer.close();
    });
  }

  test('a single file is not split mode and stays at index 0', async () => {
    const path = join(dir, `w${++n}.vcap`);
    const writer = await BagWriter.create(path, { syncMode: true });
    for (let ms = 0; ms < 300; ms += 10) writer.push(frame(ms));
    assert.deepEqual([writer.isSplitMode(), writer.getSplitIndex()], [false, 0]);
    await writer.close();
    const reader = await BagReader.create(path);
    assert.equal(reader.isSplitMode(), false);
    reader.close();
  });
});

describe('BagReader VLink parity', () => {
  for (const extension of ['.vdbx', '.vcapx']) {
    test(`getSplitIndex follows the segment of the last frame read (${extension})`, async () => {
      const path = join(dir, `s${++n}${extension}`);
      const writer = await BagWriter.create(path, { syncMode: true, splitByTime: 100, startTimestamp: 1_000 });
      for (let ms = 0; ms < 360; ms += 10) writer.push(frame(ms));
      await writer.close();
      const reader = await BagReader.create(path);
      try {
        assert.equal(reader.getSplitIndex(), 0, 'before any read');
        // Boundaries at 100, 200, 300 ms; a frame at a boundary still closes the segment before it.
        const seen: Array<[number, number]> = [];
        for (let f = reader.next(); f; f = reader.next()) seen.push([f.timestamp / 1000, reader.getSplitIndex()]);
        assert.deepEqual(
          seen,
          Array.from({ length: 36 }, (_, i) => [i * 10, Math.max(0, Math.floor((i - 1) / 10))]),
        );
        assert.equal(reader.getSplitIndex(), 3, 'stays on the last segment read at the end');
        reader.openCursor({ beginTime: 150, endTime: 160 });
        assert.equal(reader.next()?.timestamp, 150_000);
        assert.equal(reader.getSplitIndex(), 1, 'a window starting in the second segment');
        for await (const f of reader.frames({ beginTime: 250 })) {
          assert.equal(f.timestamp, 250_000);
          assert.equal(reader.getSplitIndex(), 2, 'frames() moves it too');
          break;
        }
      } finally {
        reader.close();
      }
    });
  }

  test('getSplitIndex of a single file stays 0', async () => {
    const path = join(dir, `s${++n}.vdb`);
    const writer = await BagWriter.create(path, { syncMode: true });
    for (let ms = 0; ms < 300; ms += 10) writer.push(frame(ms));
    await writer.close();
    const reader = await BagReader.create(path);
    try {
      while (reader.next());
      assert.equal(reader.getSplitIndex(), 0);
    } finally {
      reader.close();
    }
  });

  test('isRunning and waitForIdle follow the playback loop and its sessions', async () => {
    const path = join(dir, `r${++n}.vdb`);
    const writer = await BagWriter.create(path, { syncMode: true });
    for (let ms = 0; ms < 200; ms += 10) writer.push(frame(ms));
    await writer.close();
    const reader = await BagReader.create(path);
    try {
      assert.equal(reader.isRunning(), false);
      await reader.waitForIdle(); // nothing to wait for
      const seen: number[] = [];
      reader.registerOutputCallback((f) => void seen.push(f.timestamp));
      reader.play({ forceDelay: 0 });
      assert.equal(reader.isRunning(), true);
      await reader.waitForIdle();
      assert.deepEqual(
        seen,
        Array.from({ length: 20 }, (_, i) => i * 10_000),
      );
      assert.equal(reader.getStatus(), PlayStatus.Stopped);
      assert.equal(reader.isRunning(), true, 'the loop outlives its session until quit');
      // A second session queued behind a running one: idle only after both.
      reader.play({ rate: 100 });
      reader.play({ forceDelay: 0, beginTime: 100 });
      await reader.waitForIdle();
      assert.equal(seen.length, 20 + 20 + 10, 'idle only after the running session and the one queued behind it');
      assert.deepEqual(
        seen.slice(-10),
        Array.from({ length: 10 }, (_, i) => 100_000 + i * 10_000),
      );
      reader.quit();
      await reader.waitForQuit();
      assert.equal(reader.isRunning(), false);
    } finally {
      reader.close();
    }
  });
});
