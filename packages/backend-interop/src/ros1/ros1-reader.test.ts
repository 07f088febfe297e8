import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { SchemaType } from '@vlink/bag-core';
import { checkFixture } from '../testing/check-fixture.js';
import { registerAll } from '../testing/register.js';

registerAll();

describe('ROS 1 bags written by rosbags read as rosbags reads them', () => {
  for (const [name, compression] of [
    ['plain', 'none'],
    ['bz2', 'bz2'],
    ['lz4', 'lz4'],
  ] as const) {
    test(`${name}.bag`, async () => {
      const { reader, info, frames, expected } = await checkFixture(`ros1/${name}.bag`);
      try {
        assert.equal(info.format, 'bag');
        assert.equal(info.compressionType, compression);
        assert.ok(info.urls.every((u) => u.schemaType === SchemaType.Unknown && u.encoding === 'ros1'));
        // Log-time order, like rosbag's readers, although one message was written late.
        for (let i = 1; i < frames.length; i++)
          assert.ok(frames[i]!.timestamp >= frames[i - 1]!.timestamp, `order at ${i}`);
        // Messages without a std_msgs/Header have no publish time or sequence.
        assert.ok(
          frames
            .filter((f) => f.url === '/chatter')
            .every((f) => f.publishTime === undefined && f.sequence === undefined),
        );
        const connections = (info.metadata ?? []).filter((m) => m.name === 'rosbag.connection');
        assert.deepEqual(
          connections.map((c) => [
            c.values['topic'],
            c.values['type'],
            c.values['md5sum'],
            c.values['callerid'],
            c.values['latching'],
          ]),
          expected.topics.map((t) => [
            t.topic,
            t.type,
            t['md5sum' as keyof typeof t],
            t['callerid' as keyof typeof t] ?? undefined,
            t['latching' as keyof typeof t] === null ? undefined : String(t['latching' as keyof typeof t]),
          ]),
        );
      } finally {
        reader.close();
      }
    });
  }
});
