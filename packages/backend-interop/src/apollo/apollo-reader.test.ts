import assert from 'node:assert/strict';
import { test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { checkFixture } from '../testing/check-fixture.js';
import { descriptorFiles } from '../testing/decode.js';
import { registerAll } from '../testing/register.js';

registerAll();

test('an Apollo record written by cyber-record reads as cyber-record reads it', async () => {
  const { reader, info, schemas, expected } = await checkFixture('apollo/sensors.record');
  try {
    assert.equal(info.format, 'record');
    assert.equal(info.version, expected['version']);
    assert.ok(info.urls.every((u) => u.schemaType === SchemaType.Protobuf && u.encoding === 'protobuf'));
    // Each channel's ProtoDesc tree becomes a FileDescriptorSet: dependencies first, each file once.
    for (const topic of expected.topics) {
      const schema = schemas.find((s) => s.name === topic.type);
      assert.ok(schema, topic.type);
      assert.equal(schema.encoding, 'protobuf');
      assert.deepEqual(descriptorFiles(schema), topic.descriptor_files);
    }
    const header = info.metadata?.find((m) => m.name === 'record.header')?.values;
    assert.equal(header?.['message_number'], String(expected['message_count']));
    assert.equal(header?.['begin_time_ns'], expected['begin_time_ns']);
    assert.equal(header?.['end_time_ns'], expected['end_time_ns']);
    assert.equal(header?.['is_complete'], 'true');
  } finally {
    reader.close();
  }
});
