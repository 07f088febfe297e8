import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { checkFixture } from './testing/check-fixture.js';
import { absentRecording, expectedRecordings } from './testing/expected.js';
import { registerAll } from './testing/register.js';

registerAll();

/**
 * Bags ROS's own tools wrote (`rosbag record` and rosbag2's C++ writers, from 2018 on; fixtures/foreign/real/ROS.md
 * names each one's origin), read as rosbags reads them: every `<bag>.expected.json` under real/ros1 and real/ros2.
 * A bag whose expected file is there but which is not (the bags come from shared/, not from this repository's
 * history) is reported as skipped, by name.
 */
const expectedBags = (kind: 'ros1' | 'ros2') =>
  expectedRecordings(`real/${kind}`).map((name) => `real/${kind}/${name}`);

describe('ROS 1 bags written by rosbag read as rosbags reads them', () => {
  for (const relative of expectedBags('ros1')) {
    test(relative, { skip: absentRecording(relative) }, async () => {
      const { reader, info, expected } = await checkFixture(relative);
      try {
        assert.equal(info.format, 'bag');
        const connections = (info.metadata ?? []).filter((m) => m.name === 'rosbag.connection');
        assert.deepEqual(
          connections.map((c) => [c.values['topic'], c.values['type'], c.values['md5sum'], c.values['callerid']]),
          expected.topics.map((t) => [
            t.topic,
            t.type,
            t['md5sum' as keyof typeof t],
            t['callerid' as keyof typeof t] ?? undefined,
          ]),
        );
      } finally {
        reader.close();
      }
    });
  }
});

describe('ROS 2 bag folders written by rosbag2 read as rosbags reads them', () => {
  for (const relative of expectedBags('ros2')) {
    test(relative, { skip: absentRecording(relative) }, async () => {
      // rosbags merges all storage files by log time; rosbag2 (and this reader) reads them one after the other.
      const { reader, info, expected } = await checkFixture(relative, { sorted: true });
      try {
        assert.equal(info.format, 'rosbag2');
        assert.equal(info.storageType, `rosbag2-${expected['storage_identifier']}`);
        const bag = info.metadata?.find((m) => m.name === 'rosbag2.metadata')?.values;
        assert.equal(bag?.['version'], String(expected['rosbag2_version']));
        assert.equal(bag?.['relative_file_paths'], (expected['relative_file_paths'] as string[]).join(','));
        assert.equal(bag?.['message_count'], String(expected['metadata_message_count']));
        const mode = String(expected['compression_mode'] ?? '').toLowerCase();
        const compressed = mode !== '' && mode !== 'none';
        assert.equal(info.compressionType, compressed ? String(expected['compression_format']) : 'none');
      } finally {
        reader.close();
      }
    });
  }
});
