import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
import { foreignPath } from './testing/expected.js';
import { registerAll } from './testing/register.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-interop-bad-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Each fixture file, and where to put a damaged copy (a ROS 2 storage inside a copy of its folder). */
const FILES: Array<{ fixture: string; target: (copy: string) => string; format: string }> = [
  ...['json.mcap', 'protobuf.mcap', 'ros1.mcap', 'ros2.mcap', 'unchunked.mcap'].map((f) => ({
    fixture: `mcap/${f}`,
    target: (c: string) => `${c}.mcap`,
    format: 'mcap',
  })),
  ...['plain.bag', 'bz2.bag', 'lz4.bag'].map((f) => ({
    fixture: `ros1/${f}`,
    target: (c: string) => `${c}.bag`,
    format: 'bag',
  })),
  { fixture: 'ros2/sqlite3/sqlite3.db3', target: (c: string) => join(c, 'sqlite3.db3'), format: 'rosbag2' },
  { fixture: 'ros2/mcap/mcap.mcap', target: (c: string) => join(c, 'mcap.mcap'), format: 'rosbag2' },
  ...['sqlite3-zstd-file/sqlite3-zstd-file.db3.zstd', 'mcap-zstd-message/mcap-zstd-message.mcap'].map((f) => ({
    fixture: `ros2/${f}`,
    target: (c: string) => join(c, f.split('/')[1]!),
    format: 'rosbag2',
  })),
  { fixture: 'apollo/sensors.record', target: (c: string) => `${c}.record`, format: 'record' },
  ...['flight.ulg', 'edge.ulg'].map((f) => ({
    fixture: `ulog/${f}`,
    target: (c: string) => `${c}.ulg`,
    format: 'ulog',
  })),
];

type Outcome = { ok: true; count: number; complete: boolean } | { ok: false; code: string };

/** Opens and reads everything; any failure must be a BagError with a format code, and nothing may hang. */
async function attempt(path: string, tryToFix = false): Promise<Outcome> {
  try {
    const reader = await BagReader.create(path, { tryToFix });
    try {
      let count = 0;
      for await (const _ of reader.frames()) count++;
      return { ok: true, count, complete: reader.getInfo().hasCompleted };
    } finally {
      reader.close();
    }
  } catch (error) {
    assert.ok(BagError.isInstance(error), `not a BagError: ${(error as Error)?.stack ?? String(error)}`);
    // CORRUPT_DATA: a payload that does not decode (a rosbag2 message compressed on its own).
    const codes = ['CORRUPT_FILE', 'CORRUPT_DATA', 'UNSUPPORTED_FORMAT'];
    assert.ok(codes.includes(error.code), `${error.code}: ${error.message}`);
    return { ok: false, code: error.code };
  }
}

let serial = 0;
/** A damaged copy: the bag folder for ROS 2 storages (with its metadata.yaml), else the file alone. */
function damagedCopy(entry: (typeof FILES)[number], bytes: Uint8Array): string {
  const base = join(dir, `case${serial++}`);
  const path = entry.target(base);
  if (path.startsWith(`${base}/`)) {
    cpSync(foreignPath(entry.fixture, '..'), base, { recursive: true });
    return writeAndOpenPath(path, bytes, base);
  }
  return writeAndOpenPath(path, bytes, path);
}
function writeAndOpenPath(file: string, bytes: Uint8Array, open: string): string {
  writeFileSync(file, bytes);
  return open;
}

describe('truncated foreign files: a typed error, or (tryToFix) the intact part marked incomplete', () => {
  for (const entry of FILES) {
    test(entry.fixture, { timeout: 120_000 }, async () => {
      const bytes = new Uint8Array(readFileSync(foreignPath(entry.fixture)));
      const full = await attempt(damagedCopy(entry, bytes));
      assert.ok(full.ok, 'the intact copy reads');
      for (const cut of [16, 0.3, 0.6, 0.9, bytes.length - 1]) {
        const length = cut < 1 ? Math.floor(bytes.length * cut) : cut;
        const path = damagedCopy(entry, bytes.subarray(0, length));
        const plain = await attempt(path);
        if (plain.ok && plain.count < full.count) {
          // Only a format without an end marker can lose its tail unnoticed, and only at a message boundary.
          assert.equal(
            entry.format,
            'ulog',
            `${length} bytes read without an error, ${plain.count} of ${full.count} messages`,
          );
        } else if (plain.ok && entry.format === 'mcap') {
          // Every message survived (the cut is in the summary): read, but marked incomplete.
          assert.equal(plain.complete, false, `${length} bytes: an MCAP file without its footer is incomplete`);
        }
        const fixed = await attempt(path, true);
        if (fixed.ok) {
          assert.ok(fixed.count <= full.count, `tryToFix at ${length}`);
          if (!plain.ok) assert.equal(fixed.complete, false, `tryToFix at ${length} says the file is incomplete`);
        }
      }
    });
  }
});

describe('garbled foreign files: a typed error or a successful read, never another exception or a hang', () => {
  for (const entry of FILES) {
    test(entry.fixture, { timeout: 120_000 }, async () => {
      const original = new Uint8Array(readFileSync(foreignPath(entry.fixture)));
      let seed = 7;
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) >>> 0;
        return seed;
      };
      let errors = 0;
      for (let round = 0; round < 24; round++) {
        const bytes = original.slice();
        const at = round < 4 ? round * 8 : random() % bytes.length;
        for (let i = 0; i < 24 && at + i < bytes.length; i++) bytes[at + i] = round % 3 === 0 ? 0xff : random() & 0xff;
        const outcome = await attempt(damagedCopy(entry, bytes));
        if (!outcome.ok) errors++;
        await attempt(damagedCopy(entry, bytes), true);
      }
      assert.ok(errors > 0, 'damage to the header is noticed');
    });
  }
});

test('a damaged lz4 chunk fails alone: lz4 bags read after it still read', async () => {
  const bytes = new Uint8Array(readFileSync(foreignPath('ros1', 'lz4.bag')));
  const damaged = bytes.slice();
  // Garble the first chunk's compressed data (it starts after the 4117-byte bag header and the chunk's header).
  for (let i = 4300; i < 4400; i++) damaged[i] = 0xa5;
  const path = join(dir, 'garbled-lz4.bag');
  writeFileSync(path, damaged);
  const outcome = await attempt(path);
  assert.deepEqual(outcome, { ok: false, code: 'CORRUPT_FILE' });
  const good = await attempt(foreignPath('ros1', 'lz4.bag'));
  assert.deepEqual(good, { ok: true, count: 91, complete: true });
  const mcap = await attempt(foreignPath('mcap', 'protobuf.mcap'));
  assert.deepEqual(mcap, { ok: true, count: 45, complete: true });
});

describe('check of foreign files: every frame read, the damage placed', () => {
  test('each fixture passes with every message read', async () => {
    for (const entry of FILES) {
      const path = foreignPath(entry.fixture.includes('ros2/') ? join(entry.fixture, '..') : entry.fixture);
      const reader = await BagReader.create(path);
      try {
        const report = await reader.verify();
        assert.equal(report.ok, true, `${entry.fixture}: ${JSON.stringify(report.problems)}`);
        assert.equal(report.frames, reader.getInfo().messageCount);
        assert.ok(report.frames > 0);
        assert.equal(await reader.check(), true);
      } finally {
        reader.close();
      }
    }
  });

  test('a damaged MCAP chunk: where reading stopped, after how many frames', async () => {
    const bytes = new Uint8Array(readFileSync(foreignPath('mcap', 'ros1.mcap')));
    // Inside the second chunk (uncompressed, so only its CRC can tell).
    bytes.fill(0xff, bytes.length >> 1, (bytes.length >> 1) + 4);
    const path = join(dir, 'crc.mcap');
    writeFileSync(path, bytes);
    const reader = await BagReader.create(path);
    try {
      const report = await reader.verify();
      assert.equal(report.ok, false);
      assert.ok(report.frames > 0 && report.frames < 91, `${report.frames} frames`);
      const [problem] = report.problems;
      assert.match(problem!.message, /^reading stopped after \d+ frames \(the last of \/\w+\): .*CRC/);
      assert.equal(typeof problem!.offset, 'number');
      assert.equal(typeof problem!.timeUs, 'number');
      assert.equal(await reader.check(), false);
    } finally {
      reader.close();
    }
  });
});
