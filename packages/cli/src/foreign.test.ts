import assert from 'node:assert/strict';
import { after, describe, test } from '@vlink/fixtures/test';
import { BagReader } from '@vlink/bag';
import { fixturePath } from '@vlink/fixtures';
import { runCli, SLOW, tempDir } from './testing/harness.js';

// Foreign bags through the CLI, as a user types it: a rosbag2 folder as the bag argument, a ROS 1 bag cloned in,
// a read-only extension refused as an output.
const tmp = tempDir();
after(() => tmp.cleanup());
const folder = fixturePath('foreign', 'ros2', 'sqlite3');
const bag = fixturePath('foreign', 'ros1', 'lz4.bag');

describe('vlink-bag on foreign bags', () => {
  test('info on a rosbag2 folder', SLOW, async () => {
    const { code, stdout, stderr } = await runCli(['info', folder]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^Message Count: +91$/m);
    assert.match(stdout, /\/imu +sensor_msgs\/msg\/Imu$/m);
    const json = await runCli(['info', folder, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const info = JSON.parse(json.stdout);
    assert.equal(info.format, 'rosbag2');
    assert.deepEqual(info.metadata.find((m: { name: string }) => m.name === 'rosbag2.custom_data').values, {
      mission: 'fixtures',
      robot: 'rover-7',
    });
  });

  test('clone a ROS 1 bag into .vdb keeps every message', SLOW, async () => {
    const out = tmp.path('from-ros1.vdb');
    const { code, stderr } = await runCli(['clone', bag, out, '-q']);
    assert.equal(code, 0, stderr);
    const read = async (path: string) => {
      const reader = await BagReader.create(path);
      const frames: string[] = [];
      for await (const f of reader.frames())
        frames.push(`${f.url} ${f.timestamp} ${Buffer.from(f.data).toString('hex')}`);
      reader.close();
      return frames.sort();
    };
    const copied = await read(out);
    assert.equal(copied.length, 91);
    assert.deepEqual(copied, await read(bag));
  });

  test('a read-only format is refused as an output, naming why', SLOW, async () => {
    const { code, stderr } = await runCli(['clone', bag, tmp.path('out.mcap'), '-q']);
    assert.notEqual(code, 0);
    assert.match(stderr, /unsupported bag extension "\.mcap"; \.mcap is read-only/);
  });

  test('a directory that is not a bag folder is still refused', SLOW, async () => {
    const { code, stderr } = await runCli(['info', tmp.path('')]);
    assert.notEqual(code, 0);
    assert.match(stderr, /is a directory, not a bag file/);
  });
});
