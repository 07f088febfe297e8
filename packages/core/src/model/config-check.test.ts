import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter, type BagWriterOptions } from '../writer/bag-writer.js';
import { checkWriterSettings } from './config-check.js';
import { DEFAULT_WRITER_CONFIG, resolveWriterConfig } from './config.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-config-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('writer settings', () => {
  // Before, each of these was taken as it came: `maxMemorySize: '1G'` refused every frame as queueMemory, a string
  // `maxTaskDepth` became the default, `tagName: 5` failed the open with an IO_ERROR about a "src" argument,
  // `ignoreCompressUrls: 5` and `null` options threw TypeErrors.
  const wrong: Array<[unknown, RegExp]> = [
    [{ maxMemorySize: '1G' }, /^writer option maxMemorySize must be a finite number \(got "1G"\)$/],
    [{ maxTaskDepth: 'x' }, /^writer option maxTaskDepth must be a finite number \(got "x"\)$/],
    [{ maxRowCount: Number.NaN }, /maxRowCount must be a finite number \(got NaN\)/],
    [{ splitBySize: Number.POSITIVE_INFINITY }, /splitBySize must be a finite number \(got Infinity\)/],
    [{ splitByTime: 10n }, /splitByTime must be a finite number \(got 10n\)/],
    [{ syncMode: 'yes' }, /syncMode must be true or false/],
    [{ enableChunkCrc: 0 }, /enableChunkCrc must be true or false/],
    [{ tagName: 5 }, /tagName must be a string \(got 5\)/],
    [{ ignoreCompressUrls: 5 }, /ignoreCompressUrls must be a list of urls/],
    [{ ignoreCompressUrls: 'dds://a' }, /ignoreCompressUrls must be a list of urls/],
    [{ ignoreCompressUrls: ['dds://a', 7] }, /ignoreCompressUrls must hold only strings/],
    [{ timezone: 100_000 }, /timezone must be within ±1440 min/],
    [{ compress: 'brotli' }, /^unknown compression "brotli"/],
    [{ compress: 9 }, /^unknown compression 9/],
    [{ worker: 'deno' }, /worker must be true, false, 'node' or 'web'/],
    [{ maxQueueTimeMs: -5 }, /maxQueueTimeMs must be a number ≥ 0/],
    [{ summary: 'no' }, /summary must be true or false/],
    [null, /^writer options must be an object, not null$/],
    [5, /^writer options must be an object, not number$/],
  ];

  test('a wrong value is INVALID_ARGUMENT naming the setting, and no file is made', async () => {
    for (const [options, message] of wrong) {
      const path = join(dir, `w${wrong.findIndex(([o]) => o === options)}.memjson`);
      await assert.rejects(BagWriter.create(path, options as BagWriterOptions), (e: Error & { code?: string }) => {
        assert.equal(e.name, 'BagError', String(message));
        assert.equal(e.code, 'INVALID_ARGUMENT');
        assert.match(e.message, message);
        return true;
      });
      assert.equal(existsSync(path), false, String(message));
    }
  });

  test('the defaults, undefined, names and numbers of compressions and a Set of urls pass', async () => {
    checkWriterSettings({ ...DEFAULT_WRITER_CONFIG });
    checkWriterSettings({ maxTaskDepth: undefined, tagName: undefined });
    checkWriterSettings({ ignoreCompressUrls: new Set(['dds://a']), timezone: -300, beginTime: -1, worker: 'node' });
    // VLink's int64 settings keep their meaning at zero and below (cacheSize -1: no chunks; a negative queue limit
    // refuses every frame, counted).
    checkWriterSettings({ maxMemorySize: -1, cacheSize: -1, splitByTime: 0, maxSplitCount: 0, compressLevel: -5 });
    assert.equal(resolveWriterConfig({ compress: 'ZSTD' as never }).compress, 2);
    const writer = await BagWriter.create(join(dir, 'ok.memjson'), { compress: 4, maxTaskDepth: 10, syncMode: true });
    await writer.close();
  });
});
