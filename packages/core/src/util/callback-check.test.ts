import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { createFrame } from '../model/frame.js';
import { BagProcessor } from '../processor/bag-processor.js';
import { BagProcessorPlugin } from '../processor/processor-plugin.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { TriggerRecorder } from '../trigger/trigger-recorder.js';
import { BagWriter } from '../writer/bag-writer.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-callbacks-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const invalid = (message: RegExp) => ({ name: 'BagError', code: 'INVALID_ARGUMENT', message });

// Before: a callback that was no function was kept and called later, where its TypeError reached no caller; a
// plugin that was no plugin threw a TypeError half-way through binding and stayed bound, so close() threw too.
describe('callbacks and plugins of the wrong type', () => {
  test('a reader refuses them and stays usable: it reads and closes', async () => {
    const path = join(dir, 'r.memjson');
    const writer = await BagWriter.create(path, { syncMode: true });
    writer.push(createFrame({ timestamp: 1, url: 'a', data: new Uint8Array(1) }));
    await writer.close();
    const reader = await BagReader.create(path);
    assert.throws(() => reader.registerOutputCallback(5 as never), invalid(/^the output callback must be a function/));
    assert.throws(() => reader.registerStatusCallback('x' as never), invalid(/^the status callback/));
    assert.throws(() => reader.bindPluginInterface({} as never), invalid(/^a plugin must be a BagPluginInterface/));
    await assert.rejects(reader.verify({ onProgress: 5 as never }), invalid(/^onProgress must be a function/));
    reader.registerOutputCallback(undefined);
    let n = 0;
    for await (const _ of reader.frames()) n++;
    assert.equal(n, 1);
    reader.close();
  });

  test('a writer, a processor and a trigger recorder refuse them', async () => {
    const writer = await BagWriter.create(join(dir, 'w.memjson'), { syncMode: true });
    assert.throws(
      () => writer.registerErrorCallback(undefined as never),
      invalid(/^the error callback must be a function$/),
    );
    assert.throws(() => writer.registerSplitCallback(null as never), invalid(/^the split callback/));
    assert.throws(() => writer.registerSchemaCallback(7 as never), invalid(/^the schema callback/));
    assert.throws(() => writer.bindPluginInterface(7 as never), invalid(/^a plugin must be/));
    await writer.close();
    const processor = new BagProcessor();
    assert.throws(() => processor.registerOutputCallback({} as never), invalid(/^the output callback/));
    processor.close();
    assert.throws(
      () => new BagProcessorPlugin(5 as never),
      invalid(/^the data timestamp function must be a function$/),
    );
    const recorder = new TriggerRecorder({ dumpDir: dir });
    assert.throws(
      () => recorder.registerHooks({ onDumpFinished: 'upload' } as never),
      invalid(/^hooks.onDumpFinished/),
    );
    assert.throws(() => recorder.registerHooks(null as never), invalid(/^hooks must be an object$/));
    assert.throws(() => recorder.registerSchemaCallback(1 as never), invalid(/^the schema callback/));
    await recorder.quit();
  });
});
