import assert from 'node:assert/strict';
import { describe, test } from '@vlink/fixtures/test';
import { cyberRecordBackend, interopBackends, rosbag2Backend, rosbagBackend, ulogBackend } from './backends.js';

describe('interop backends', () => {
  test('every backend but .mcap is read-only: its writer is refused with NOT_SUPPORTED naming the format', async () => {
    const formats = new Map([
      [rosbagBackend, 'ROS 1 .bag'],
      [rosbag2Backend, 'ROS 2 bag'],
      [cyberRecordBackend, 'Apollo .record'],
      [ulogBackend, 'PX4 .ulg'],
    ]);
    assert.deepEqual(
      interopBackends.filter((backend) => backend.readOnly),
      [...formats.keys()],
    );
    for (const [backend, format] of formats) {
      await assert.rejects(backend.createWriter('/nowhere/x', undefined as never, undefined as never), {
        code: 'NOT_SUPPORTED',
        reason: `${format} files are read-only here: write a .vdb or .vcap instead`,
        file: '/nowhere/x',
      });
    }
  });
});
