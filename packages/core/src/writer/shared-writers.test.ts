import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { createFrame } from '../model/frame.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter } from './bag-writer.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-shared-'));
const env = (globalThis as unknown as { process: { env: Record<string, string | undefined> } }).process.env;
const saved = { path: env['VLINK_BAG_PATH'], tag: env['VLINK_BAG_TAG'] };
after(async () => {
  await BagWriter.closeShared();
  restore('VLINK_BAG_PATH', saved.path);
  restore('VLINK_BAG_TAG', saved.tag);
  rmSync(dir, { recursive: true, force: true });
});

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete env[name];
  else env[name] = value;
}

describe('process-wide writers', () => {
  test('globalGet: null when VLINK_BAG_PATH is unset or unsupported; else one shared writer tagged by VLINK_BAG_TAG', async () => {
    delete env['VLINK_BAG_PATH'];
    assert.equal(await BagWriter.globalGet(), null);
    env['VLINK_BAG_PATH'] = join(dir, 'global.bag');
    assert.equal(await BagWriter.globalGet(), null);

    const path = join(dir, 'global.memjson');
    env['VLINK_BAG_PATH'] = path;
    env['VLINK_BAG_TAG'] = 'from-env';
    const [a, b] = await Promise.all([BagWriter.globalGet(), BagWriter.globalGet()]);
    assert.ok(a);
    assert.equal(a, b, 'concurrent first calls share one writer');
    assert.equal(await BagWriter.globalGet(), a);
    assert.equal(a.context.tagName, 'from-env');
    a.push(createFrame({ timestamp: 1, url: 'g', data: new Uint8Array(1) }));
    await a.close();
    const reader = await BagReader.create(path);
    assert.equal(reader.getInfo().tagName, 'from-env');
    assert.equal(reader.getInfo().messageCount, 1);
    reader.close();
    const fresh = await BagWriter.globalGet();
    assert.ok(fresh && fresh !== a, 'a closed global writer is replaced by a new one');
    await fresh.close();
  });

  test('filterGet: one writer per path, null for an unsupported extension, a new one after close', async () => {
    const p1 = join(dir, 'one.memjson');
    const p2 = join(dir, 'two.memjson');
    const [a, b, c] = await Promise.all([BagWriter.filterGet(p1), BagWriter.filterGet(p1), BagWriter.filterGet(p2)]);
    assert.ok(a && c);
    assert.equal(a, b);
    assert.notEqual(a, c);
    assert.equal(await BagWriter.filterGet(join(dir, 'x.unknown')), null);
    await BagWriter.closeShared();
    assert.equal(a.stats().currentFile, '');
    const again = await BagWriter.filterGet(p1);
    assert.ok(again && again !== a);
    await again.close();
  });

  test('filterGet forgets a writer that could not be created, so a later call can retry', async () => {
    const path = join(dir, 'missing', 'x.memjson');
    await assert.rejects(BagWriter.filterGet(path), { code: 'IO_ERROR' });
    await assert.rejects(BagWriter.filterGet(path), { code: 'IO_ERROR' });
  });
});
