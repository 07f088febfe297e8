import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from '@vlink/fixtures/test';
import { registerBackend } from '../backend/registry.js';
import { createFrame, type Frame } from '../model/frame.js';
import { BagReader } from '../reader/bag-reader.js';
import { memoryBackend } from '../testing/memory-backend.js';
import { BagWriter } from '../writer/bag-writer.js';
import { BagPluginInterface } from './bag-plugin.js';

registerBackend(memoryBackend);
const dir = mkdtempSync(join(tmpdir(), 'vlink-plugin-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** Renames `a` to `renamed/a`, drops `secret`, and holds frames until flush, emitting them in reverse. */
class ReversingPlugin extends BagPluginInterface {
  held: Frame[] = [];
  resets = 0;
  override convertUrlMeta(url: string): string | null {
    if (url === 'secret') return null;
    return url === 'a' ? 'renamed/a' : url;
  }
  override onWrite(frame: Frame): void {
    this.held.push({ ...frame, timestamp: frame.timestamp + 1 });
  }
  override onReset(): void {
    this.resets++;
  }
  override flush(): void {
    for (const f of this.held.reverse()) this.doCallback(f);
    this.held = [];
  }
}

for (const syncMode of [true, false]) {
  test(`a write plugin renames, drops, delays and re-times frames (syncMode ${syncMode})`, async () => {
    const path = join(dir, `p-${syncMode}.memjson`);
    const writer = await BagWriter.create(path, { syncMode });
    const plugin = new ReversingPlugin();
    writer.bindPluginInterface(plugin);
    assert.equal(plugin.resets, 1);
    assert.equal(
      writer.push(createFrame({ timestamp: 10, url: 'a', data: new Uint8Array([1]) })),
      10,
      'push returns the resolved timestamp',
    );
    writer.push(createFrame({ timestamp: 20, url: 'secret', data: new Uint8Array([2]) }));
    writer.push(createFrame({ timestamp: 30, url: 'b', data: new Uint8Array([3]) }));
    writer.setUrlLoss('a', 0.5);
    await writer.close();
    assert.equal(writer.stats().dropped.plugin, 1);
    const reader = await BagReader.create(path);
    const got = [];
    for await (const f of reader.frames()) got.push([f.timestamp, f.url, f.data[0]]);
    assert.deepEqual(got, [
      [11, 'renamed/a', 1],
      [31, 'b', 3],
    ]);
    assert.equal(reader.getInfo().urls.find((m) => m.url === 'renamed/a')?.loss, 0.5);
    reader.close();
  });
}
