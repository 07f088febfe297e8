import assert from 'node:assert/strict';
import { BagError, type Frame, infoProblems } from '@vlink/bag-core';
import { describe, test } from '@vlink/fixtures/test';
import { mixedFrames, openBytes, readFrames, recordToBytes } from './vcap.test.helper.js';

// What a tryToFix read of a damaged .vcap reads around, and how it says so: the same as a foreign .mcap
// (`vcap.problems` in its info, which `info` shows and the CLI's copying verbs warn of).

const key = (f: Frame) => `${f.timestamp} ${f.url} ${f.actionType} ${[...f.data.subarray(0, 8)]}`;

/** Offset of the `n`th chunk record of a file's data section. */
function chunkAt(bytes: Uint8Array, n: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let seen = 0;
  for (let at = 8; at + 9 <= bytes.length; at += 9 + Number(view.getBigUint64(at + 1, true)))
    if (bytes[at] === 0x06 && seen++ === n) return at;
  throw new Error(`no chunk ${n}`);
}

describe('a tryToFix read of a damaged .vcap', () => {
  const COUNT = 600;

  test('a chunk whose CRC fails: the strict read stops at it; tryToFix leaves it out, counts it, and reads the rest', async () => {
    // Found by hand: `clone --try-to-fix` of such a file failed at the chunk and copied nothing, while `fix` dropped
    // only that chunk.
    const written = mixedFrames(COUNT);
    const whole = await recordToBytes(written, { cacheSize: 4096 });
    const damaged = whole.slice();
    const at = chunkAt(whole, 2);
    damaged[at + 200] = damaged[at + 200]! ^ 0xff;
    const strict = await openBytes(damaged);
    try {
      assert.throws(
        () => readFrames(strict),
        (e: unknown) => BagError.isInstance(e) && e.code === 'CORRUPT_FILE',
      );
    } finally {
      strict.close();
    }
    const reader = await openBytes(damaged, true);
    try {
      const frames = readFrames(reader);
      const known = new Set(written.map(key));
      const keys = frames.map(key);
      assert.equal(new Set(keys).size, keys.length, 'no frame twice');
      for (const k of keys) assert.ok(known.has(k), `made up: ${k}`);
      const lost = COUNT - frames.length;
      assert.ok(lost > 0 && lost < COUNT / 4, `${frames.length} of ${COUNT} read`);
      const info = reader.info();
      assert.equal(info.messageCount, frames.length);
      assert.equal(
        info.urls.reduce((sum, u) => sum + u.count, 0),
        frames.length,
        'the urls count what was read',
      );
      assert.equal(info.hasCompleted, false);
      assert.deepEqual(infoProblems(info), [
        `a chunk the summary points at does not read (chunk CRC mismatch at offset ${at}): the data section was scanned instead, and ${lost} of the ${COUNT} messages its statistics count were not read`,
        '1 damaged chunk(s) skipped',
      ]);
    } finally {
      reader.close();
    }
  });

  test('cut short: tryToFix reads what the cut left and says where the data ends; a whole file lists nothing', async () => {
    const whole = await recordToBytes(mixedFrames(COUNT), { cacheSize: 4096 });
    const cutAt = chunkAt(whole, 3) + 100;
    const reader = await openBytes(whole.subarray(0, cutAt), true);
    try {
      const problems = infoProblems(reader.info());
      assert.match(problems[0] ?? '', new RegExp(`^the data section ends at offset ${chunkAt(whole, 3)}: `));
      assert.match(problems.at(-1) ?? '', /^the file ends without its footer and closing magic/);
      assert.equal(reader.info().messageCount, readFrames(reader).length);
    } finally {
      reader.close();
    }
    const intact = await openBytes(whole, true);
    try {
      assert.equal(intact.info().metadata, undefined);
      assert.equal(readFrames(intact).length, COUNT);
    } finally {
      intact.close();
    }
  });
});
