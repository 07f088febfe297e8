import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, test } from '@vlink/fixtures/test';
import { ActionType, BagWriter, registerBackend, SchemaType } from '@vlink/bag-core';
import { sqliteBackend } from './backend.js';
import { tempDir, pattern } from './testing/util.js';

registerBackend(sqliteBackend);
const tmp = tempDir('bagwriter');
after(() => tmp.cleanup());

for (const syncMode of [true, false]) {
  test(`core BagWriter records a .vdb through sqliteBackend (syncMode ${syncMode})`, async () => {
    const path = join(tmp.dir, `bw-${syncMode}.vdb`);
    const writer = await BagWriter.create(path, { syncMode, compress: 'lzav' });
    for (let i = 0; i < 500; i++) {
      writer.push({
        timestamp: i * 1000,
        url: i % 2 ? 'dds://a' : 'dds://b',
        data: pattern(300, i),
        serType: 'raw',
        schemaType: SchemaType.Raw,
        actionType: ActionType.Publish,
      });
    }
    await writer.close();
    const reader = await sqliteBackend.openReader(path, { readOnly: true });
    try {
      assert.equal(reader.info().messageCount, 500);
      assert.equal(reader.info().compressionType, 'lzav');
      const frames = [...reader.frames({ urls: ['dds://a'] })];
      assert.equal(frames.length, 250);
      assert.deepEqual(frames[0]!.data, pattern(300, 1));
    } finally {
      reader.close();
    }
  });
}
