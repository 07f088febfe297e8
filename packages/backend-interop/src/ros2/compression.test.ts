import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test, withOwnTempDir } from '@vlink/fixtures/test';
import { BagError, BagReader } from '@vlink/bag-core';
import { loadMcapCodecs } from '../common/lz4.js';
import { foreignPath } from '../testing/expected.js';
import { registerAll } from '../testing/register.js';
import { DecompressedCopy, declaredSize, decompressMessage, decompressUpTo } from './compression.js';

registerAll();
const dir = mkdtempSync(join(tmpdir(), 'vlink-rosbag2-compression-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('rosbag2 zstd compression', () => {
  test('the declared size of zstd frames, in each width of the header field', async () => {
    const codecs = await loadMcapCodecs();
    for (const size of [0, 1, 200, 255, 256, 300, 65_791, 65_792, 200_000]) {
      const data = new Uint8Array(size).map((_, i) => (i * 7) & 0xff);
      const frame = codecs['zstd']!.compress!(data, 1);
      assert.equal(declaredSize(frame), size, `${size} bytes`);
      assert.deepEqual(decompressMessage(frame, codecs), data);
    }
    // rosbags streams a file-compressed storage: a frame without a declared size.
    const file = new Uint8Array(readFileSync(foreignPath('ros2', 'sqlite3-zstd-file', 'sqlite3-zstd-file.db3.zstd')));
    assert.equal(declaredSize(file), undefined);
    assert.equal(decompressMessage(file, codecs).byteLength > file.byteLength, true);
    assert.equal(declaredSize(new Uint8Array([1, 2, 3, 4, 5, 6, 7])), undefined);
  });

  test('a compression rosbag2 has no plugin for is refused by name', async () => {
    const copy = join(dir, 'lz4-file');
    cpSync(foreignPath('ros2', 'sqlite3-zstd-file'), copy, { recursive: true });
    const yaml = join(copy, 'metadata.yaml');
    writeFileSync(yaml, readFileSync(yaml, 'utf8').replace('compression_format: zstd', 'compression_format: lz4'));
    await assert.rejects(
      BagReader.create(copy),
      (error: unknown) =>
        BagError.isInstance(error) && error.code === 'UNSUPPORTED_FORMAT' && /lz4/.test(error.message),
    );
  });

  test('a payload that is not a zstd frame fails the read with CORRUPT_DATA naming its url', async () => {
    const copy = join(dir, 'garbled-message');
    cpSync(foreignPath('ros2', 'mcap-zstd-message'), copy, { recursive: true });
    // A bag whose metadata says every message is compressed, over a storage of plain CDR messages.
    const yaml = join(copy, 'metadata.yaml');
    const plain = join(dir, 'plain');
    cpSync(foreignPath('ros2', 'mcap'), plain, { recursive: true });
    writeFileSync(
      join(plain, 'metadata.yaml'),
      readFileSync(yaml, 'utf8').replaceAll('mcap-zstd-message.mcap', 'mcap.mcap'),
    );
    const reader = await BagReader.create(plain);
    try {
      await assert.rejects(
        (async () => {
          for await (const _ of reader.frames()) {
            // reading is the test
          }
        })(),
        (error: unknown) =>
          BagError.isInstance(error) && error.code === 'CORRUPT_DATA' && typeof error.url === 'string',
      );
    } finally {
      reader.close();
    }
  });

  test('a file that decompresses far beyond its size is refused, and its partial copy removed', () =>
    withOwnTempDir(async (tmp) => {
      const codecs = await loadMcapCodecs();
      const bomb = join(dir, 'bomb.db3.zstd');
      writeFileSync(bomb, codecs['zstd']!.compress!(new Uint8Array(8 * 1024 * 1024), 3));
      const copies = () => readdirSync(tmp).filter((name) => name.startsWith('vlink-rosbag2-')).length;
      await assert.rejects(
        DecompressedCopy.of(bomb, { maxRatio: 250, minLimit: 0, minFreeBytes: 0 }),
        (error: unknown) =>
          BagError.isInstance(error) && error.code === 'LIMIT_REACHED' && /more than \d+ bytes/.test(error.message),
      );
      assert.equal(copies(), 0);
      // Within the limits the same file is copied whole.
      const copy = await DecompressedCopy.of(bomb);
      try {
        assert.equal(copies(), 1);
        assert.equal(statSync(copy.path).size, 8 * 1024 * 1024);
      } finally {
        copy.remove();
      }
      assert.equal(copies(), 0);
    }));

  test('a message that decompresses beyond the limit is refused', async () => {
    const codecs = await loadMcapCodecs();
    const frame = codecs['zstd']!.compress!(new Uint8Array(300_000).fill(7), 3);
    assert.deepEqual(decompressUpTo(frame, 300_000), new Uint8Array(300_000).fill(7));
    assert.throws(
      () => decompressUpTo(frame, 299_999),
      (error: unknown) => BagError.isInstance(error) && error.code === 'LIMIT_REACHED',
    );
  });
});
